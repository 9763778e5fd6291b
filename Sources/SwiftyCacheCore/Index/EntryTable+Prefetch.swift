import Synchronization

/// Loading many entries at once (a saved index, a journal): each lookup's first touch of the
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

    /// Loads, for each of `tags` whose buckets ``prefetch(tags:)`` brought in, the record of the
    /// first bucket with that tag, the first bytes of its key and its LRU neighbours: what a
    /// lookup and a touch of it read next. Changes nothing.
    ///
    /// - Complexity: O(tags), each a short probe of buckets already in the cache.
    func prefetchEntries(tags: some Sequence<UInt32>) {
        var sink: UInt64 = 0
        arena.bytes.withUnsafeBufferPointer { keys in
            records.withUnsafeBufferPointer { records in
                for tag in tags {
                    guard let index = buckets.firstRecord(withTag: tag), index < records.count else { continue }
                    let record = records[index]
                    sink ^= record.keyWord
                    if record.hasInlineKey {
                        sink ^= record.inlineKeyWords.3
                    } else if record.keyOffset < keys.count {
                        sink ^= UInt64(keys[record.keyOffset])
                    }
                    if Int(record.previous) < records.count { sink ^= records[Int(record.previous)].keyWord }
                    if Int(record.next) < records.count { sink ^= records[Int(record.next)].keyWord }
                }
            }
        }
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
