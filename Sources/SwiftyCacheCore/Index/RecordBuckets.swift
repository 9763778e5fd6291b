/// The hash table of ``EntryTable``: open addressing with linear probing over 8-byte buckets,
/// each the index of a record (plus one; 0 is an empty bucket) beside the high 32 bits of its
/// key's hash, the tag. A probe reads one array until a tag matches, and only then compares the
/// key in the arena; the tag is also all that growing and removing need, so no hash is kept per
/// record and no key is hashed again.
///
/// A bucket is picked from the tag's product with the golden ratio (Fibonacci hashing). Removal
/// shifts the following cluster back (no tombstones), so lookups never slow down with churn.
/// The table stays at most three quarters full and doubles when it would not: 8 bytes per entry
/// just after it doubled, 16 just before, against 16 to 32 for a bucket of two `Int`s.
///
/// - Complexity: find, insert and remove are O(1) expected, amortized over growth.
struct RecordBuckets {
    private(set) var buckets: [UInt64] = []
    /// 64 minus the base-2 logarithm of the bucket count.
    private var shift: UInt64 = 64
    private(set) var count = 0

    init() {}

    /// Buckets laid out by another table of this layout (a saved index's image), holding `count`
    /// records. Requires a power-of-two bucket count of at least 8, and at most three quarters
    /// of them used; ``adoptionViolation(tagOf:sameKey:maximumSteps:)`` checks the rest.
    init?(adopting buckets: [UInt64], count: Int) {
        guard buckets.count >= 8, buckets.count.nonzeroBitCount == 1, count >= 0, count &* 4 <= buckets.count &* 3
        else { return nil }
        self.buckets = buckets
        self.count = count
        shift = 64 &- UInt64(buckets.count.trailingZeroBitCount)
    }

    /// The number of buckets a table of `count` records has after ``reserveCapacity(_:)``.
    static func bucketCount(for count: Int) -> Int {
        var bucketCount = 8
        while count &* 4 > bucketCount &* 3 { bucketCount &*= 2 }
        return bucketCount
    }

    /// Places `record` with `tag` in `buckets`, a table of this layout being built (a power of two
    /// in size, with room left), by the probe a lookup follows.
    static func place(record: Int, tag: UInt32, in buckets: inout [UInt64]) {
        let mask = buckets.count &- 1
        var slot = home(of: tag, shift: 64 &- UInt64(buckets.count.trailingZeroBitCount))
        while buckets[slot] != 0 { slot = (slot &+ 1) & mask }
        buckets[slot] = bucket(record: record, tag: tag)
    }

    /// Where a probe ended: the record that matched, or the empty bucket where a new one goes.
    enum Probe {
        case found(record: Int)
        case vacant(bucket: Int)
    }

    /// The tag of a 64-bit hash.
    @inline(__always)
    static func tag(of hash: UInt64) -> UInt32 { UInt32(truncatingIfNeeded: hash >> 32) }

    @inline(__always)
    private func home(of tag: UInt32) -> Int { Self.home(of: tag, shift: shift) }

    @inline(__always)
    private static func home(of tag: UInt32, shift: UInt64) -> Int {
        Int(truncatingIfNeeded: (UInt64(tag) &* 0x9E37_79B9_7F4A_7C15) >> shift)
    }

    @inline(__always)
    private var mask: Int { buckets.count &- 1 }

    /// The record whose bucket has `tag` and for which `matches` holds, or `nil`.
    @inline(__always)
    func find(tag: UInt32, _ matches: (Int) -> Bool) -> Int? {
        guard !buckets.isEmpty, case .found(let record) = probe(tag: tag, matches) else { return nil }
        return record
    }

    /// Walks the probe sequence of `tag` to a matching record or the first empty bucket.
    /// Requires a non-empty table.
    @inline(__always)
    func probe(tag: UInt32, _ matches: (Int) -> Bool) -> Probe {
        buckets.withUnsafeBufferPointer { buckets in
            var bucket = home(of: tag)
            let mask = buckets.count &- 1
            while true {
                let stored = buckets[bucket]
                if stored == 0 { return .vacant(bucket: bucket) }
                if UInt32(truncatingIfNeeded: stored >> 32) == tag {
                    let record = Int(truncatingIfNeeded: stored & 0xFFFF_FFFF) &- 1
                    if matches(record) { return .found(record: record) }
                }
                bucket = (bucket &+ 1) & mask
            }
        }
    }

    /// The home bucket of `tag`, loaded (see ``EntryTable/prefetch(tags:)``); 0 for an empty
    /// table.
    @inline(__always)
    func loadHome(of tag: UInt32) -> UInt64 {
        buckets.isEmpty ? 0 : buckets[home(of: tag)]
    }

    /// The record of the first bucket in `tag`'s probe that has the tag, without comparing keys
    /// (a guess for ``EntryTable/prefetchEntries(tags:)``); `nil` if the probe meets an empty
    /// bucket first.
    func firstRecord(withTag tag: UInt32) -> Int? {
        guard !buckets.isEmpty else { return nil }
        guard case .found(let record) = probe(tag: tag, { _ in true }) else { return nil }
        return record
    }

    /// Grows the table if one more entry would fill it past three quarters; call it before a
    /// ``probe(tag:_:)`` whose vacant bucket ``record(_:tag:inBucket:)`` fills.
    mutating func makeRoomForOneMore() {
        if (count &+ 1) &* 4 > buckets.count &* 3 { grow(to: Swift.max(8, buckets.count &* 2)) }
    }

    /// Records `record` in the vacant bucket a probe just returned.
    mutating func record(_ record: Int, tag: UInt32, inBucket bucket: Int) {
        buckets[bucket] = Self.bucket(record: record, tag: tag)
        count &+= 1
    }

    /// Records `record`, which is not in the table yet.
    mutating func insert(_ record: Int, tag: UInt32) {
        makeRoomForOneMore()
        place(Self.bucket(record: record, tag: tag))
        count &+= 1
    }

    @inline(__always)
    static func bucket(record: Int, tag: UInt32) -> UInt64 {
        UInt64(tag) << 32 | UInt64(truncatingIfNeeded: record &+ 1) & 0xFFFF_FFFF
    }

    private mutating func place(_ stored: UInt64) {
        var bucket = home(of: UInt32(truncatingIfNeeded: stored >> 32))
        while buckets[bucket] != 0 { bucket = (bucket &+ 1) & mask }
        buckets[bucket] = stored
    }

    /// Rebuilds the table with `bucketCount` buckets (a power of two).
    ///
    /// - Complexity: O(bucketCount).
    private mutating func grow(to bucketCount: Int) {
        let old = buckets
        buckets = []  // the old array's only reference is `old`: freed after the loop
        buckets = [UInt64](unsafeUninitializedCapacity: bucketCount) { storage, initialized in
            // Written whole at once: faulted in whole, in one call.
            if bucketCount &* 8 >= HeapMemory.prefaultThreshold {
                HeapMemory.prefault(UnsafeMutableRawBufferPointer(storage))
            }
            storage.initialize(repeating: 0)
            initialized = bucketCount
        }
        shift = 64 &- UInt64(bucketCount.trailingZeroBitCount)
        for stored in old where stored != 0 { place(stored) }
        let freedBytes = old.count &* MemoryLayout<UInt64>.stride
        if freedBytes >= HeapMemory.threshold {
            _ = consume old
            HeapMemory.returnToSystem()
        }
    }

    /// Makes room for `capacity` entries without growing.
    mutating func reserveCapacity(_ capacity: Int) {
        guard capacity > 0, capacity <= Int(UInt32.max) else { return }
        var bucketCount = Swift.max(8, buckets.count)
        while capacity &* 4 > bucketCount &* 3 { bucketCount &*= 2 }
        if bucketCount > buckets.count { grow(to: bucketCount) }
    }

    /// Forgets `record`, whose tag is `tag`; does nothing if it is not recorded. Entries after it
    /// in its cluster move back, so that every probe still reaches its entry.
    mutating func remove(_ record: Int, tag: UInt32) {
        guard !buckets.isEmpty else { return }
        let wanted = Self.bucket(record: record, tag: tag)
        var hole = home(of: tag)
        while buckets[hole] != wanted {
            if buckets[hole] == 0 { return }
            hole = (hole &+ 1) & mask
        }
        count &-= 1
        var next = hole
        while true {
            next = (next &+ 1) & mask
            let stored = buckets[next]
            if stored == 0 { break }
            // The entry at `next` may fill the hole unless its home lies cyclically after the
            // hole, up to `next`: then a probe from its home would not pass the hole.
            let home = home(of: UInt32(truncatingIfNeeded: stored >> 32))
            if (hole &- home) & mask < (next &- home) & mask {
                buckets[hole] = stored
                hole = next
            }
        }
        buckets[hole] = 0
    }

    mutating func removeAll() {
        self = RecordBuckets()
    }

    /// What is wrong with adopted buckets (``init(adopting:count:)``), `nil` when nothing is:
    /// every bucket names a record below `count`, once, reached from its home without an empty
    /// bucket on the way; no two records reached there have the same key (`sameKey`); and the
    /// buckets' records and tags are the table's: their ``mixedPair(record:tag:key:)``s under
    /// `mixKey` add up to `pairSum`, the same sum over the records and their keys' tags (a
    /// sequential check where looking each record's tag up would be a cache miss per bucket;
    /// `mixKey` is drawn per load, so no file can aim at a wrong set with the right sum). Stops
    /// after `maximumSteps` probe steps in all: a forged table whose clusters would make lookups
    /// crawl is refused rather than walked.
    ///
    /// - Complexity: O(buckets + steps); `count` bits of memory.
    func adoptionViolation(
        pairSum: UInt64, mixKey: UInt64, sameKey: (Int, Int) -> Bool, maximumSteps: Int
    ) -> String? {
        var seen = [UInt64](repeating: 0, count: (count &+ 63) / 64)
        var recorded = 0
        var steps = 0
        var sum: UInt64 = 0
        let mask = self.mask
        for (bucket, stored) in buckets.enumerated() where stored != 0 {
            let record = Int(truncatingIfNeeded: stored & 0xFFFF_FFFF) &- 1
            guard record >= 0, record < count else { return "bucket \(bucket) names no record" }
            let word = record >> 6
            let bit: UInt64 = 1 << UInt64(record & 63)
            guard seen[word] & bit == 0 else { return "record \(record) is in two buckets" }
            seen[word] |= bit
            recorded &+= 1
            let tag = UInt32(truncatingIfNeeded: stored >> 32)
            sum &+= Self.mixedPair(record: record, tag: tag, key: mixKey)
            var probe = home(of: tag)
            while probe != bucket {
                let other = buckets[probe]
                if other == 0 { return "record \(record) sits past an empty bucket of its probe" }
                if UInt32(truncatingIfNeeded: other >> 32) == tag,
                    sameKey(record, Int(truncatingIfNeeded: other & 0xFFFF_FFFF) &- 1)
                {
                    return "record \(record) has the key of another"
                }
                steps &+= 1
                if steps > maximumSteps { return "the probes are longer than a table of this size makes" }
                probe = (probe &+ 1) & mask
            }
        }
        guard recorded == count else { return "the buckets name \(recorded) records of \(count)" }
        guard sum == pairSum else { return "a bucket holds a record with a tag not its key's" }
        return nil
    }

    /// A record and its tag mixed under `key` (SplitMix64's finalizer): the terms of
    /// ``adoptionViolation(pairSum:mixKey:sameKey:maximumSteps:)``'s sum.
    @inline(__always)
    static func mixedPair(record: Int, tag: UInt32, key: UInt64) -> UInt64 {
        var mixed = (UInt64(truncatingIfNeeded: record) << 32 | UInt64(tag)) ^ key
        mixed = (mixed ^ (mixed >> 30)) &* 0xBF58_476D_1CE4_E5B9
        mixed = (mixed ^ (mixed >> 27)) &* 0x94D0_49BB_1331_11EB
        return mixed ^ (mixed >> 31)
    }

    /// Whether every recorded record is reached from its home, has the tag `tagOf` gives and
    /// is recorded once; the first problem found, `nil` when there is none.
    ///
    /// - Complexity: O(buckets).
    func invariantViolation(tagOf: (Int) -> UInt32?) -> String? {
        var recorded = 0
        for (bucket, stored) in buckets.enumerated() where stored != 0 {
            recorded += 1
            let record = Int(stored & 0xFFFF_FFFF) - 1
            let tag = UInt32(truncatingIfNeeded: stored >> 32)
            guard tagOf(record) == tag else { return "bucket \(bucket) holds record \(record) with a wrong tag" }
            var probe = home(of: tag)
            while probe != bucket {
                if buckets[probe] == 0 { return "record \(record) sits past an empty bucket of its probe" }
                probe = (probe + 1) & mask
            }
        }
        guard recorded == count else { return "the table records \(recorded) entries, its count says \(count)" }
        guard buckets.isEmpty || count * 4 <= buckets.count * 3 else { return "the table is over three quarters full" }
        return nil
    }
}
