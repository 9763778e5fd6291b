import Synchronization

/// Loading many entries at once (a snapshot, a journal): each lookup's first touch of the
/// hash table is a cache miss of about 100 ns on a large index, the bulk of a reopen. Touched
/// for a batch of keys before the batch is applied, the misses overlap (the loads do not depend
/// on each other), and the probes that follow find their buckets in the cache.
extension EntryTable {
    /// Keys per batch: enough misses in flight to fill the processor's queue of them.
    static let prefetchBatch = 32

    /// Loads the home bucket of each of `tags`. Changes nothing: a hint, however the table
    /// changes before the lookups.
    ///
    /// - Complexity: O(tags).
    func prefetch(tags: some Sequence<UInt32>) {
        var sink: UInt64 = 0
        for tag in tags { sink ^= buckets.loadHome(of: tag) }
        Self.consume(sink)
    }

    /// Keeps the loads of ``prefetch(tags:)``, which the optimizer would otherwise drop.
    @inline(never)
    private static func consume(_ value: UInt64) {
        if value == 0x5EED_5EED_5EED_5EED { prefetchSink.store(value, ordering: .relaxed) }
    }
}

/// Where ``EntryTable/prefetch(tags:)`` leaves a value, on a one-in-2⁶⁴ chance: the condition
/// is what keeps its loads.
private let prefetchSink = Atomic<UInt64>(0)
