import Dispatch

/// Reads under the lock: the plan before the values are opened, the check after, the one-hold
/// plan of values that check themselves, and the `READ` lines buffered for writing after the lock.
extension CacheState {
    /// What a read needs to open an entry's values outside the lock, and to check afterwards
    /// that the entry did not change meanwhile.
    struct ReadPlan {
        var lengths: SlotLengths
        var location: ValueLocation
        var sequenceNumber: UInt64
    }

    /// The first half of a read, under the lock: the committed entry's lengths, location and
    /// sequence number; `nil` on a miss (counted with `recordingRead`). The caller opens the
    /// values outside the lock, then calls ``finishRead(key:plan:opened:recordingRead:)``.
    ///
    /// - Complexity: O(1).
    mutating func planRead(key: String, recordingRead: Bool) throws(CacheError) -> ReadPlan? {
        try plannedEntry(key: key, recordingRead: recordingRead)?.plan
    }

    /// ``planRead(key:recordingRead:)`` with the entry's index, from one probe of the index.
    private mutating func plannedEntry(key: String, recordingRead: Bool) throws(CacheError) -> (
        index: Int, plan: ReadPlan
    )? {
        if isReadOnly, readOnlyView?.isReplaced ?? false { try refreshReadOnly() }
        guard let index = table.index(of: key), let lengths = table.readableLengths(index) else {
            if recordingRead { statistics.missCount += 1 }
            return nil
        }
        let plan = ReadPlan(
            lengths: lengths, location: table.location(index), sequenceNumber: table.sequenceNumber(index))
        return (index, plan)
    }

    /// A read planned and recorded in one lock hold, for values that check themselves (a
    /// packed record whose slots are all inline: its checksum covers the key and the lengths,
    /// and a superseded record still holds the values that were current at the plan): the hit,
    /// the LRU touch and the `READ` line are recorded with the plan, and no second lock hold
    /// is needed. If the values then cannot be read, the caller calls ``unrecordRead()`` and
    /// reads the validating way. Not for a read-only cache. The `READ` line is buffered, never
    /// written under the lock (see ``takeReadFlush()``).
    ///
    /// - Complexity: O(1).
    mutating func planRecordedRead(key: String) throws(CacheError) -> ReadPlan? {
        guard let (index, plan) = try plannedEntry(key: key, recordingRead: true) else { return nil }
        statistics.hitCount += 1
        table.touch(index)
        redundantOpCount += 1
        journal.append(.read, key: key)
        return plan
    }

    /// Takes back the hit a ``planRecordedRead(key:)`` counted, when the read
    /// goes the validating way after all (which counts it again). The LRU touch and the `READ`
    /// line stay: a second one changes nothing.
    mutating func unrecordRead() {
        statistics.hitCount -= 1
    }

    /// How the second half of a read ended.
    enum ReadOutcome {
        /// The values opened are the entry's committed ones: the read counts.
        case valid
        /// The entry changed (committed, removed, or, for a read-only cache, touched by the
        /// writer) after the plan: the caller closes what it opened and plans again.
        case changed
        /// The values were missing or damaged: the entry was dropped, the read is a miss.
        case missing
    }

    /// The second half of a read, under the lock: checks that the entry is still the one
    /// planned, then records the hit (LRU touch, buffered `READ` line) or, when its values
    /// could not be opened, drops it as damaged.
    ///
    /// - Complexity: O(1), plus, for a read-only cache, reading what the writer appended since.
    mutating func finishRead(key: String, plan: ReadPlan, opened: Bool, recordingRead: Bool) -> ReadOutcome {
        // A record moved by compaction counts as a change: the read plans again at its new place.
        guard let index = table.index(of: key), table[index].isReadable,
            table.sequenceNumber(index) == plan.sequenceNumber, table.location(index) == plan.location
        else { return .changed }
        if isReadOnly {
            let viewFileSystem = directory.fileSystem
            readOnlyView?.catchUp(fileSystem: viewFileSystem)
            if readOnlyView?.hasChanged(key) ?? false {
                // The writer changed the entry since the journal was read: its files are no
                // longer the ones the journal described. A miss until `refresh()`.
                if recordingRead { statistics.missCount += 1 }
                return readOnlyView?.isReplaced == true ? .changed : .missing
            }
        }
        guard opened else {
            if !isReadOnly { dropDamagedEntry(index) }
            if recordingRead { statistics.missCount += 1 }
            return .missing
        }
        if recordingRead {
            statistics.hitCount += 1
            table.touch(index)
            if !isReadOnly {
                redundantOpCount += 1
                journal.append(.read, key: key)
            }
        }
        return .valid
    }

    /// Whether enough `READ` lines are buffered to write them, and no flush is scheduled yet:
    /// `true` once, for a caller that must not write (an `async` read on the cooperative pool)
    /// to schedule one on the I/O pool, which then calls ``takeReadFlush()``.
    mutating func claimReadFlush() -> Bool {
        guard journal.isReadFlushDue, !isReadFlushClaimed else { return false }
        isReadFlushClaimed = true
        return true
    }

    /// The buffered `READ` lines, once enough have piled up, for the caller to write after it
    /// releases the lock (``JournalReadFlush/write()``): reads buffer their lines and never
    /// write under the lock, so readers of other keys never wait behind a `write(2)`. A failure
    /// of that write only marks the journal broken, as for any read.
    mutating func takeReadFlush() -> JournalReadFlush? {
        isReadFlushClaimed = false
        return journal.takeReadFlush()
    }

    /// The keys of committed entries, from least to most recently used.
    ///
    /// - Complexity: O(n).
    func readableKeys() -> [String] {
        table.indicesInLRUOrder.compactMap { index in table[index].isReadable ? table.key(at: index) : nil }
    }
}
