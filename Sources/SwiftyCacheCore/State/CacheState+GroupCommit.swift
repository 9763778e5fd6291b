/// Durable commits that share a sync (``GroupCommit``), in a directory whose segments are its
/// log: a group's records are appended under the lock with one `write`
/// (``stageGroup(_:)``), synced without it, then applied under it in order
/// (``applyGroup(_:syncFailure:)``): a value is visible only once it is durable, and a call
/// whose sync failed is never visible.
///
/// While a group awaits its sync, `TAIL` lines stop at its first append
/// (``logTailPosition``); compaction's copies and removals wait for it (the facade runs them
/// outside groups), so that nothing the log must read back is passed by a `TAIL` line or
/// shadowed by a later copy of an older value.
extension CacheState {
    /// One whole-entry commit of small values, its record built outside the lock.
    struct GroupMember: Sendable {
        var key: String
        var lengths: SlotLengths
        var record: [UInt8]
    }

    /// What became of a group's member.
    enum GroupOutcome: Sendable {
        case committed
        /// Its entry's values are files: the edit transaction must write it instead.
        case needsEdit
        case failed(CacheError)
    }

    /// A group appended and awaiting its sync.
    struct StagedGroup {
        /// Each member's outcome when it was decided before the append.
        var outcomes: [GroupOutcome?]
        /// The members appended, in order: their place in the group, record location and
        /// sequence number.
        var appended: [(member: Int, location: ValueLocation, sequenceNumber: UInt64)] = []
        /// The segment to sync, when anything was appended.
        var segment: UInt32?
    }

    /// Checks each member as a commit would and appends the records of those that may commit
    /// with one `write`, unsynced; marks where the appends start, which no `TAIL` line passes
    /// until ``applyGroup(_:syncFailure:)``.
    ///
    /// - Complexity: O(members) and one `write`.
    mutating func stageGroup(_ members: [GroupMember]) -> StagedGroup {
        var staged = StagedGroup(outcomes: Array(repeating: nil, count: members.count))
        guard let packed = records, !isClosed else {
            let error = CacheError.closed(operation: .setData)
            staged.outcomes = members.map { _ in .failed(error) }
            return staged
        }
        var pieces: [(key: String, record: [UInt8])] = []
        var chosen: [Int] = []
        for (position, member) in members.enumerated() {
            do throws(CacheError) {
                try checkWritable(key: member.key, operation: .setData)
                if let index = table.index(of: member.key) {
                    let entry = table[index]
                    if entry.isBeingEdited { throw CacheError.editInProgress(key: member.key, operation: .setData) }
                    if entry.isReadable && storage.keepsFiles(location: entry.location, lengths: entry.lengths) {
                        staged.outcomes[position] = .needsEdit
                        continue
                    }
                }
            } catch {
                staged.outcomes[position] = .failed(error)
                continue
            }
            pieces.append((member.key, member.record))
            chosen.append(position)
        }
        guard !pieces.isEmpty else { return staged }
        do throws(CacheError) {
            try ensureJournalWritable(operation: .setData, key: nil)
            let appended: (start: ValueLocation, locations: [ValueLocation])
            do {
                appended = try packed.appendGroup(pieces)
            } catch  where error.isDirectoryVanished {
                guard try restoreVanishedDirectory() else { throw error }
                appended = try packed.appendGroup(pieces)
            }
            pendingGroupStart = appended.start
            staged.segment = appended.start.segment
            for (position, location) in zip(chosen, appended.locations) {
                staged.appended.append((position, location, nextSequenceNumber))
                nextSequenceNumber += 1
            }
        } catch {
            for position in chosen { staged.outcomes[position] = .failed(error) }
        }
        return staged
    }

    /// Applies a group once its sync is done: each member in order, as a commit (index,
    /// `CLEAN` line, evictions), unless a later commit of its key was applied meanwhile (then
    /// it was superseded: committed, and nothing to do). With `syncFailure`, every appended
    /// member fails and nothing of it is visible. Returns each member's outcome.
    ///
    /// - Complexity: O(members) and one `write` of the journal.
    mutating func applyGroup(_ staged: StagedGroup, members: [GroupMember], syncFailure: CacheError?)
        -> [GroupOutcome]
    {
        pendingGroupStart = nil
        var outcomes = staged.outcomes
        guard let packed = records, !staged.appended.isEmpty else { return outcomes.map { $0 ?? .committed } }
        if let syncFailure {
            for item in staged.appended { outcomes[item.member] = .failed(syncFailure) }
            return outcomes.map { $0 ?? .committed }
        }
        var applied: [(key: String, index: Int, replaced: CommittedValues?, location: ValueLocation)] = []
        // Each member's entry as it found it, to go back to (in reverse) if the journal fails.
        var before: [(key: String, previous: PreviousValues?)] = []
        for item in staged.appended {
            let member = members[item.member]
            let existing = table.index(of: member.key)
            var replaced: CommittedValues?
            if let existing {
                let entry = table[existing]
                if entry.isBeingEdited {
                    outcomes[item.member] = .failed(CacheError.editInProgress(key: member.key, operation: .setData))
                    continue
                }
                if entry.isReadable {
                    if table.sequenceNumber(existing) > item.sequenceNumber {
                        outcomes[item.member] = .committed
                        continue
                    }
                    replaced = CommittedValues(location: entry.location, lengths: entry.lengths)
                }
            }
            before.append((member.key, existing.flatMap(previousValues(at:))))
            packed.noteCommitted(location: item.location, size: Int64(member.record.count), replacing: replaced)
            let index = existing ?? table.insert(key: member.key, valueCount: valueCount)
            let oldTotal = replaced.map { $0.lengths.reduce(0, +) } ?? 0
            let (grown, overflow) = size.addingReportingOverflow(member.lengths.reduce(0, +) - oldTotal)
            size = overflow ? Int.max : grown
            table.setCommitted(
                index, lengths: member.lengths, location: item.location, sequenceNumber: item.sequenceNumber)
            table.touch(index)
            noteSupersededLine(replacing: replaced != nil)
            journal.append(.clean(lengths: member.lengths, location: item.location), key: member.key)
            applied.append((member.key, index, replaced, item.location))
            outcomes[item.member] = .committed
        }
        let victims = evictionVictims(limit: Self.inlineEvictionLimit, sparing: applied.last?.index ?? -1)
            .filter { victim in !applied.contains { $0.index == victim } }
        for victim in victims { journal.append(.remove, key: table.key(at: victim)) }
        do {
            try journal.flush(operation: .commit)
        } catch {
            // The entries go back to what they held before the group (or are forgotten): the
            // journal's repair writes memory, with a `TAIL` line past the group's records.
            for (key, previous) in before.reversed() {
                undoFailedCommit(key: key, previous: previous, announced: false)
            }
            for item in staged.appended where outcomes[item.member].map(isCommitted) ?? false {
                outcomes[item.member] = .failed(error)
            }
            return outcomes.map { $0 ?? .committed }
        }
        for item in applied {
            changes.record(key: item.key, kind: .committed)
            if let replaced = item.replaced,
                !storage.deleteReplacedFiles(
                    key: item.key, old: replaced, location: item.location, lengths: table[item.index].lengths)
            {
                noteUndeletedFiles(of: item.key)
            }
        }
        for victim in victims {
            changes.record(key: table.key(at: victim), kind: .evicted)
            forgetEntryDeletingValues(victim)
        }
        noteRemovedLines(victims.count, evicted: true)
        statistics.evictionCount += victims.count
        statistics.writeCount += applied.count
        noteGarbage()
        noteLoggedCommit()
        return outcomes.map { $0 ?? .committed }
    }

    private func isCommitted(_ outcome: GroupOutcome) -> Bool {
        if case .committed = outcome { return true }
        return false
    }
}
