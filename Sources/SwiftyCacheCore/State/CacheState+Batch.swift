/// A batch of sets and removals committed as one unit in packed storage: one append of the
/// records, one `BATCH` journal line (replayed all or nothing), one sync with `syncsWrites`.
extension CacheState {
    /// One change of a batch, its record (for a set) built outside the lock: a range of the
    /// batch's buffer of records. A struct rather than an enum with payloads, so that reading
    /// a member's key or its set in place copies nothing else.
    struct BatchMember {
        /// What a set writes. `tag`: the key's tag in journal lines when the caller knows it
        /// (from the record's seal), `nil` to compute it.
        struct Write {
            let lengths: SlotLengths
            let record: Range<Int>
            let tag: UInt32?
        }

        let key: String
        /// The set, `nil` for a removal.
        let write: Write?

        /// A set of `key`: `lengths`, its record at `record` of the batch's buffer.
        static func set(key: String, lengths: SlotLengths, record: Range<Int>, tag: UInt32?) -> BatchMember {
            BatchMember(key: key, write: Write(lengths: lengths, record: record, tag: tag))
        }

        /// A removal of `key`.
        static func remove(key: String) -> BatchMember { BatchMember(key: key, write: nil) }
    }

    /// Commits `members` in order as one unit (their records built into `recordBytes`, each
    /// set's a range of it): every record appended with one `write`, then one
    /// `BATCH` line naming them all (and the removals), then, with `syncsWrites`, the syncs of
    /// one commit. A crash leaves all of the batch or none of it. Returns `false`, with nothing
    /// done, when the batch cannot be one unit: file storage, or a set of a key whose current
    /// values are files (their deletion needs the edit transaction's `DIRTY` line).
    ///
    /// The first batch of a journal an earlier release could read rebuilds it first under the
    /// magic of one that holds batches (``Journal/packedBatchMagic``), which those releases refuse.
    ///
    /// - Throws: ``CacheError/Code/editInProgress`` when an editor holds one of the keys, with
    ///   nothing written; the errors of a commit. After a failure every key of the batch holds
    ///   its previous value (a key the batch created is dropped): the journal is broken, and
    ///   its repair writes what memory holds (`CacheState+FailedCommit.swift`).
    /// - Complexity: O(members) plus one `write` of the records and one of the journal.
    mutating func commitBatch(_ members: [BatchMember], records recordBytes: [UInt8]) throws(CacheError) -> Bool {
        guard let packed = records, !members.isEmpty else { return false }
        // Each key hashed once: its entry as the batch found it, and its tag for an insertion.
        var found: [(index: Int?, tag: UInt32)] = []
        found.reserveCapacity(members.count)
        for position in members.indices {
            try checkWritable(key: members[position].key, operation: .writeBatch)
            let lookUp = table.lookUp(members[position].key)
            found.append(lookUp)
            guard let index = lookUp.index else { continue }
            let entry = table[index]
            if entry.isBeingEdited {
                throw CacheError.editInProgress(key: members[position].key, operation: .writeBatch)
            }
            if members[position].write != nil, entry.isReadable,
                storage.keepsFiles(location: entry.location, lengths: entry.lengths)
            {
                return false
            }
        }
        // A rebuild may apply other caches' lines first (sharing): the keys are looked up again.
        journal.adoptDeferredFailure()
        let rebuilds = journal.failure != nil || !journal.marksBatches
        try ensureJournalWritable(operation: .writeBatch, key: nil)
        if !journal.marksBatches {
            journal.marksBatches = true
            do {
                try rebuildJournal()
            } catch {
                journal.marksBatches = false
                throw error
            }
        }
        if rebuilds { found = members.map { table.lookUp($0.key) } }
        let appended = members.map { BatchRecord(key: $0.key, record: $0.write?.record) }
        var locations: [ValueLocation] = []
        do {
            locations = try packed.appendBatch(appended, records: recordBytes)
        } catch  where error.isDirectoryVanished {
            guard try restoreVanishedDirectory() else { throw error }
            return try commitBatch(members, records: recordBytes)
        }
        var lines: [Journal.Member] = []
        lines.reserveCapacity(members.count)
        var lastCommitted = -1
        var committedKeys: [String] = []
        committedKeys.reserveCapacity(members.count)
        // The removals in order, and those a later set of the batch did not undo: a set, so
        // that a batch of many removals and sets stays O(members).
        var removals: [String] = []
        var removed: Set<String> = []
        var nextLocation = locations.makeIterator()
        // The records' bytes, accounted for in one hold of the storage's lock after the loop.
        var accounted: [(location: ValueLocation, size: Int64, replacing: CommittedValues?)] = []
        accounted.reserveCapacity(members.count)
        // Each set's entry as it found it, to go back to (in reverse) if the journal fails.
        var before: [(key: String, previous: PreviousValues?)] = []
        before.reserveCapacity(members.count)
        for position in members.indices {
            let key = members[position].key
            if let write = members[position].write {
                let (lengths, record, tag) = (write.lengths, write.record, write.tag)
                guard let location = nextLocation.next() else {
                    packed.noteCommitted(accounted)
                    throw CacheError.packedInvariant(key: key, slot: 0)
                }
                // Nothing leaves the table in this loop, so an entry found stays; a key not found
                // may have been inserted by an earlier set of the batch.
                let (index, isNew) =
                    found[position].index.map { ($0, false) }
                    ?? table.indexInsertingIfAbsent(key: key, tag: found[position].tag, valueCount: valueCount)
                let previous = isNew ? nil : previousValues(at: index)
                let replaced = previous?.values
                before.append((key, previous))
                accounted.append((location, Int64(record.count), replaced))
                let oldTotal = replaced.map { $0.lengths.reduce(0, +) } ?? 0
                let (grown, overflow) = size.addingReportingOverflow(lengths.reduce(0, +) - oldTotal)
                size = overflow ? Int.max : grown
                table.setCommitted(index, lengths: lengths, location: location, sequenceNumber: nextSequenceNumber)
                nextSequenceNumber += 1
                table.touch(index)
                lastCommitted = index
                committedKeys.append(key)
                noteSupersededLine(replacing: replaced != nil)
                if !removed.isEmpty { removed.remove(key) }
                lines.append(
                    Journal.Member(operation: .clean(lengths: lengths, location: location), key: key, tag: tag))
            } else {
                guard let index = found[position].index ?? table.index(of: key), table[index].isReadable else {
                    continue
                }
                // Applied once the line is written: until then the entry stands.
                if removed.insert(key).inserted { removals.append(key) }
                noteRemovedLines(1, evicted: false)
                lines.append(Journal.Member(operation: .remove, key: key, tag: nil))
            }
        }
        packed.noteCommitted(accounted)
        guard !lines.isEmpty else { return true }
        var listed: Set<String> = []
        removals.removeAll { !removed.contains($0) || !listed.insert($0).inserted }
        journal.appendBatch(lines)
        let victims = evictionVictims(limit: Self.inlineEvictionLimit, sparing: lastCommitted)
            .filter { victim in !removed.contains(table.key(at: victim)) }
        for victim in victims { journal.append(.remove, key: table.key(at: victim)) }
        do {
            try journal.flush(operation: .writeBatch)
        } catch {
            for (key, previous) in before.reversed() {
                undoFailedCommit(key: key, previous: previous, announced: false)
            }
            throw error
        }
        for key in committedKeys { changes.record(key: key, kind: .committed) }
        for key in removals {
            guard let index = table.index(of: key) else { continue }
            changes.record(key: key, kind: .removed)
            forgetEntryDeletingValues(index)
        }
        for victim in victims {
            changes.record(key: table.key(at: victim), kind: .evicted)
            forgetEntryDeletingValues(victim)
        }
        noteRemovedLines(victims.count, evicted: true)
        statistics.evictionCount += victims.count
        noteGarbage()
        do {
            // Logged, the batch is durable with its segment's sync.
            if !journal.logsRecords {
                try journal.syncIfDurable(operation: .writeBatch, key: nil, includesDirectory: false)
            }
        } catch {
            // Not known to be durable: back to what they held, as a single commit's entry.
            for (key, previous) in before.reversed() where !removed.contains(key) {
                undoFailedCommit(key: key, previous: previous, announced: true)
            }
            throw error
        }
        statistics.writeCount += committedKeys.count
        statistics.removeCount += removals.count
        noteLoggedCommit()
        return true
    }
}
