import Dispatch

/// Reads under the lock: which way a read goes, recorded at once for values that check
/// themselves, the check after the values were opened, and the `READ` lines buffered for
/// writing after the lock.
extension CacheState {
    /// What a read needs to open an entry's values outside the lock, and to check afterwards
    /// that the entry did not change meanwhile.
    struct ReadPlan {
        var lengths: SlotLengths
        var location: ValueLocation
        var sequenceNumber: UInt64
    }

    /// How a read begins, under the lock: the one decision of which way it goes.
    enum ReadStart {
        /// No committed entry (a miss, counted when the read records itself).
        case miss
        /// The entry's values check themselves (a packed record that holds every slot: its
        /// checksum covers the key and the lengths, and a superseded record still holds the
        /// values current at the plan). The hit, the LRU touch and the `READ` line are
        /// recorded: the caller reads the record outside the lock and, only if it cannot,
        /// comes back with ``abandonRecordedRead(key:plan:damaged:)``.
        case recorded(ReadPlan)
        /// Open the values outside the lock, then check them with
        /// ``finishRead(key:plan:opened:recordingRead:)``.
        case planned(ReadPlan)
        /// A read from memory only that must do file I/O (a read-only cache checks an entry
        /// against the writer's journal): nothing was recorded.
        case needsIO
    }

    /// Begins a read of `key`. With `recordsInOneHold`, an entry whose values check themselves
    /// is recorded now (``ReadStart/recorded(_:)``), so that readers of different keys meet
    /// at the lock once per read, not twice; never for a read-only cache, which checks every
    /// entry against the writer's journal. The `READ` line is buffered, never written under
    /// the lock (see ``takeReadFlush()``).
    ///
    /// - Complexity: O(1).
    mutating func beginRead(
        key: String, recordingRead: Bool, cachedOnly: Bool, recordsInOneHold: Bool
    ) throws(CacheError) -> ReadStart {
        if cachedOnly && isReadOnly { return .needsIO }
        if isReadOnly, readOnlyView?.isReplaced ?? false { try refreshReadOnly() }
        guard let index = table.index(of: key), let lengths = table.readableLengths(index) else {
            if recordingRead { statistics.missCount += 1 }
            return .miss
        }
        let plan = ReadPlan(
            lengths: lengths, location: table.location(index), sequenceNumber: table.sequenceNumber(index))
        guard recordsInOneHold && recordingRead && !isReadOnly,
            recordReader?.holdsInline(location: plan.location, lengths: plan.lengths) == true
        else { return .planned(plan) }
        statistics.hitCount += 1
        recordUse(of: index, key: key)
        return .recorded(plan)
    }

    /// Ends a ``ReadStart/recorded(_:)`` read whose record could not be read: the hit is taken
    /// back (the LRU touch and the `READ` line stay: a second one changes nothing). A
    /// `damaged` record of the entry as planned drops the entry, counted once, and the read is
    /// ``ReadCheck/missing``; otherwise (not in memory, or the entry changed since) the read
    /// is ``ReadCheck/changed`` and goes the validating way.
    ///
    /// - Complexity: O(1).
    mutating func abandonRecordedRead(key: String, plan: ReadPlan, damaged: Bool) -> ReadCheck {
        statistics.hitCount -= 1
        // Sharing: another cache may have moved the record (and deleted its segment) since
        // the plan; the entry is dropped only as the journal has it now, under the lock.
        if damaged && isShared {
            try? enterExclusive()
            guard holdsOperationLock else { return .changed }
        }
        guard damaged, let index = table.index(of: key), table[index].isReadable,
            table.sequenceNumber(index) == plan.sequenceNumber, table.location(index) == plan.location
        else { return .changed }
        records?.noteDamagedRecord()
        dropDamagedEntry(index)
        statistics.missCount += 1
        return .missing
    }

    /// How the check of a read's values ended.
    enum ReadCheck {
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
    mutating func finishRead(key: String, plan: ReadPlan, opened: Bool, recordingRead: Bool) -> ReadCheck {
        // Sharing: values missing may have been moved by another cache (see above).
        if !opened && isShared {
            try? enterExclusive()
            guard holdsOperationLock else { return .changed }
        }
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
            if isReadOnly { table.touch(index) } else { recordUse(of: index, key: key) }
        }
        return .valid
    }

    /// A hit's LRU touch, and in file storage its buffered `READ` line. Packed storage writes
    /// nothing for a read: the order lives in memory until a rebuild or a clean close.
    ///
    /// - Complexity: O(1).
    private mutating func recordUse(of index: Int, key: String) {
        table.touch(index)
        guard journalsReads else {
            unjournaledTouches &+= 1
            return
        }
        redundantOpCount += 1
        journal.append(.read, key: key)
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
