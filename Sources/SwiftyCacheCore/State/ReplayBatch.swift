/// Journal records replayed a batch at a time (see ``CacheState/replayJournal(fd:path:size:removedKeys:)``):
/// each key copied into one buffer as it is parsed, then, for the whole batch, the index's
/// memory each record will touch loaded first (``EntryTable/prefetch(tags:)`` and
/// ``EntryTable/prefetchEntries(tags:)``), then the records applied in their order. On a large
/// index every lookup of a `READ` or `MOVE` line misses the cache three to five times (bucket,
/// record, key, LRU neighbours); batched, the misses overlap.
struct ReplayBatch {
    private var keys: [UInt8] = []
    private var ends: [Int] = []
    private var operations: [Journal.Operation] = []
    private var tags: [UInt32] = []

    init() {
        keys.reserveCapacity(EntryTable.prefetchBatch * 128)
        ends.reserveCapacity(EntryTable.prefetchBatch)
        operations.reserveCapacity(EntryTable.prefetchBatch)
        tags.reserveCapacity(EntryTable.prefetchBatch)
    }

    var isFull: Bool { operations.count >= EntryTable.prefetchBatch }
    var isEmpty: Bool { operations.isEmpty }

    mutating func append(_ key: UnsafeBufferPointer<UInt8>, _ operation: Journal.Operation) {
        keys.append(contentsOf: key)
        ends.append(keys.count)
        operations.append(operation)
    }

    /// Computes the records' tags in `table` and touches what they will use in it. Call it
    /// before ``drain(_:)``, not from it: a copy of the table held while `apply` changes the
    /// index would make every change copy all of it.
    ///
    /// - Complexity: O(records).
    mutating func prefetch(in table: EntryTable) {
        keys.withUnsafeBufferPointer { all in
            var start = 0
            for end in ends {
                tags.append(table.tag(of: UnsafeBufferPointer(rebasing: all[start..<end])))
                start = end
            }
        }
        table.prefetch(tags: tags)
        table.prefetchEntries(tags: tags)
    }

    /// Calls `apply` with each record's key, its tag (from ``prefetch(in:)``) and its
    /// operation, in order, and empties the batch.
    ///
    /// - Complexity: O(records).
    mutating func drain(_ apply: (UnsafeBufferPointer<UInt8>, UInt32, Journal.Operation) -> Void) {
        keys.withUnsafeBufferPointer { all in
            var start = 0
            for (index, end) in ends.enumerated() {
                apply(UnsafeBufferPointer(rebasing: all[start..<end]), tags[index], operations[index])
                start = end
            }
        }
        keys.removeAll(keepingCapacity: true)
        ends.removeAll(keepingCapacity: true)
        operations.removeAll(keepingCapacity: true)
        tags.removeAll(keepingCapacity: true)
    }
}
