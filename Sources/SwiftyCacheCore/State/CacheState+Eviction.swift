/// Eviction: which entries leave when the cache is over ``CacheState/maxSize``.
extension CacheState {
    /// Evictions a commit makes itself, journaled in the same write as its `CLEAN` line, so that
    /// a steady stream of writes to a full cache needs no hand-off to the cleanup thread. The
    /// cleanup thread takes what is left beyond this many (after a large value or a lowered
    /// `maxSize`).
    static let inlineEvictionLimit = 16

    /// The bytes ``maxSize`` counts for the entries (``SizeBudget``): their values' in file
    /// storage, also their records' headers and journal lines in packed storage.
    ///
    /// - Complexity: O(1).
    var chargedSize: Int { budget.chargedSize(values: size, entries: table.count, keyBytes: table.keyBytes) }

    /// Whether the entries are charged more than ``maxSize`` allows them (``SizeBudget``).
    var isOverBudget: Bool { chargedSize > budget.limit(maxSize: maxSize) }

    /// Evicts least recently used entries until the cache is within ``maxSize``
    /// (``isOverBudget``), skipping entries being edited.
    ///
    /// - Complexity: O(evicted entries + entries being edited).
    mutating func trimToSize() throws(CacheError) {
        guard isOverBudget else { return }
        let victims = evictionVictims(limit: Int.max, sparing: -1)
        // Deleted under the lock: deferring them costs a rename each, and on Linux creates,
        // renames and unlinks in one directory serialize in the kernel anyway.
        try removeEntries(victims, operation: .evicting)
        statistics.evictionCount += victims.count
    }

    /// The least recently used entries to evict, eldest first, until within ``maxSize`` or
    /// `limit` of them: committed entries not being edited and not pinned, other than the one
    /// at `sparing`. The pinned entries the walk passes become the newest in LRU order, so
    /// that the next walk does not pass them again until the entries after them have gone.
    ///
    /// - Complexity: O(victims + entries being edited or pinned that the walk passes): a
    ///   pinned entry is passed once per turn of the LRU order.
    mutating func evictionVictims(limit: Int, sparing: Int) -> [Int] {
        // Sharing: the pins another cache wrote count here.
        if isShared && isOverBudget { followOthersPins() }
        let limitBytes = budget.limit(maxSize: maxSize)
        var projected = chargedSize
        guard projected > limitBytes else { return [] }
        var victims: [Int] = []
        var passedPins: [Int] = []
        var cursor = table.eldest
        while projected > limitBytes && cursor != -1 && victims.count < limit {
            let entry = table[cursor]
            if entry.isReadable && !entry.isBeingEdited && cursor != sparing {
                if !pins.isEmpty && pins.contains(table.key(at: cursor)) {
                    passedPins.append(cursor)
                } else {
                    victims.append(cursor)
                    projected -= budget.charge(values: entry.totalLength, keyLength: table.keyLength(at: cursor))
                }
            }
            cursor = table.indexAfter(cursor)
        }
        for index in passedPins { table.touch(index) }
        return victims
    }

    /// The keys eviction would take, eldest first, were the limit `maxSize`: the walk of
    /// ``evictionVictims(limit:sparing:)`` without evicting, and without moving pinned entries.
    ///
    /// - Complexity: O(victims + entries being edited or pinned that the walk passes).
    func keysEvicted(atMaxSize maxSize: Int) -> [String] {
        let limitBytes = budget.limit(maxSize: maxSize)
        var projected = chargedSize
        var keys: [String] = []
        var cursor = table.eldest
        while projected > limitBytes && cursor != -1 {
            let entry = table[cursor]
            let key = table.key(at: cursor)
            if entry.isReadable && !entry.isBeingEdited && (pins.isEmpty || !pins.contains(key)) {
                keys.append(key)
                projected -= budget.charge(values: entry.totalLength, keyLength: table.keyLength(at: cursor))
            }
            cursor = table.indexAfter(cursor)
        }
        return keys
    }

    /// One pass of background maintenance: repairs a broken journal, evicts down to `maxSize`,
    /// and begins compacting the journal when redundant lines outnumber entries (the caller
    /// writes the returned rebuild outside the lock). Failures leave the work for the next pass
    /// (claimed by the next operation); they never surface as crashes.
    mutating func runCleanup() -> JournalRebuild? {
        isCleanupScheduled = false
        // The compaction that follows this pass (outside the lock) looks at the segments itself.
        isCompactionDue = false
        // The pass sizes the space reserve after it, whatever else it does.
        isReserveDue = false
        guard !isClosed else { return nil }
        // A journal that stays broken does not stop eviction: it frees space without it.
        try? ensureJournalWritable(operation: .cleaningUp, key: nil)
        // Recorded in the journal writer's failure where it matters; retried on the next pass.
        try? trimToSize()
        return beginJournalRebuild()
    }

    /// Evicts down to `maxSize`, writes buffered lines, and rebuilds the journal if due.
    mutating func flush() throws(CacheError) {
        guard !isReadOnly else { throw CacheError.readOnly(operation: .flush) }
        try ensureJournalWritable(operation: .flush, key: nil)
        try trimToSize()
        try journal.flush(operation: .flush)
        if isJournalRebuildRequired { try rebuildJournal() }
    }
}
