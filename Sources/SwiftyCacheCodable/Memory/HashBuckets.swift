/// The hash table of an ``LRUDictionary``: open addressing with linear probing over 8-byte
/// buckets that hold a slot number and 32 bits of its entry's hash, so that a probe reads one
/// array until a hash matches; the keys stay in the dictionary's slots, compared by the caller.
/// The full hashes are kept by slot (``slotHashes``), for removals and growth, which a lookup
/// never reads: a bucket of 8 bytes keeps the array the lookups touch half the size.
///
/// The dictionary hands in each key's hash, so a caller that already hashed the key (to pick a
/// stripe, say) does not hash it again. Hashes come from `Hashable.hashValue`, seeded per process,
/// so keys chosen by an adversary do not collide more than others. A bucket is picked from the
/// hash's high bits after a multiplication by the golden ratio (Fibonacci hashing), so that
/// tables whose keys share their low bits (the keys of one stripe) still spread over every
/// bucket. Removal shifts the following cluster back (no tombstones), so lookups never slow down
/// with churn. The table stays at most three quarters full and doubles when it would not.
///
/// - Complexity: find, insert and remove are O(1) expected, amortized over growth.
@usableFromInline
package struct HashBuckets: Sendable {
    /// A bucket: the slot number + 1 of its entry (0 for an empty bucket) and the low 32 bits of
    /// the entry's hash.
    @usableFromInline
    struct Bucket: Sendable {
        @usableFromInline var slotPlusOne: UInt32
        @usableFromInline var tag: UInt32

        @inlinable
        init(slot: Int, hash: Int) {
            // Slots stay below `slotLimit` (the dictionary's users bound their counts by it).
            slotPlusOne = UInt32(truncatingIfNeeded: slot &+ 1)
            tag = UInt32(truncatingIfNeeded: hash)
        }

        @inlinable var slot: Int { Int(slotPlusOne) &- 1 }
        @inlinable var isEmpty: Bool { slotPlusOne == 0 }
        @inlinable static var empty: Bucket { Bucket(slot: -1, hash: 0) }
    }

    /// The most slots a table numbers: a bucket holds a slot number in 32 bits. (Four billion
    /// values in memory would take hundreds of gigabytes first.)
    @inlinable package static var slotLimit: Int { Int(UInt32.max) &- 1 }

    /// The buckets; a power of two long.
    @usableFromInline var buckets: [Bucket] = []
    /// The hash of the entry in each slot (stale in slots no longer recorded), for removals.
    @usableFromInline var slotHashes: [Int] = []
    /// 64 minus the base-2 logarithm of the bucket count: the shift that keeps a product's top bits.
    @usableFromInline var shift = 64
    /// Entries in the table.
    @usableFromInline package private(set) var count = 0

    @inlinable
    package init() {}

    /// Where a probe for a new entry ended: the slot of an equal entry, or the empty bucket
    /// where the new one goes.
    @usableFromInline
    package enum Probe {
        case found(slot: Int)
        case vacant(bucket: Int)
    }

    /// The bucket where a probe for `hash` starts. Requires a non-empty table.
    @inlinable
    func home(of hash: Int) -> Int {
        let mixed = UInt64(truncatingIfNeeded: hash) &* 0x9E37_79B9_7F4A_7C15
        return Int(truncatingIfNeeded: mixed >> UInt64(shift))
    }

    @inlinable
    var mask: Int { buckets.count &- 1 }

    /// The slot whose entry has `hash` and for which `matches` holds, or `nil`.
    ///
    /// - Complexity: O(1) expected: the probe ends at the first empty bucket.
    @inlinable
    package func find(hash: Int, _ matches: (Int) -> Bool) -> Int? {
        guard !buckets.isEmpty else { return nil }
        guard case .found(let slot) = probe(hash: hash, matches) else { return nil }
        return slot
    }

    /// Walks the probe sequence of `hash` to an entry with that hash for which `matches` holds,
    /// or to the first empty bucket. Requires a non-empty table.
    @inlinable
    package func probe(hash: Int, _ matches: (Int) -> Bool) -> Probe {
        var bucket = home(of: hash)
        let tag = UInt32(truncatingIfNeeded: hash)
        while true {
            let stored = buckets[bucket]
            if stored.isEmpty { return .vacant(bucket: bucket) }
            if stored.tag == tag && matches(stored.slot) { return .found(slot: stored.slot) }
            bucket = (bucket &+ 1) & mask
        }
    }

    /// Grows the table if one more entry would fill it past three quarters; call it before a
    /// ``probe(hash:_:)`` whose vacant bucket ``record(slot:hash:inBucket:)`` fills.
    ///
    /// - Complexity: O(1) amortized.
    @inlinable
    package mutating func makeRoomForOneMore() {
        if (count &+ 1) &* 4 > buckets.count &* 3 { grow(to: Swift.max(8, buckets.count &* 2)) }
    }

    /// Records `slot`, whose entry has `hash`, in the vacant bucket a probe just returned.
    @inlinable
    package mutating func record(slot: Int, hash: Int, inBucket bucket: Int) {
        setHash(hash, ofSlot: slot)
        buckets[bucket] = Bucket(slot: slot, hash: hash)
        count &+= 1
    }

    /// Records `slot`, whose entry has `hash` and is not in the table yet.
    ///
    /// - Complexity: O(1) amortized.
    @inlinable
    package mutating func insert(slot: Int, hash: Int) {
        makeRoomForOneMore()
        setHash(hash, ofSlot: slot)
        place(slot: slot, hash: hash)
        count &+= 1
    }

    @inlinable
    mutating func setHash(_ hash: Int, ofSlot slot: Int) {
        if slot < slotHashes.count {
            slotHashes[slot] = hash
        } else {
            // Slots are handed out in order: a new one is the next.
            assert(slot == slotHashes.count, "HashBuckets: slot \(slot) skips slots")
            slotHashes.append(hash)
        }
    }

    @inlinable
    mutating func place(slot: Int, hash: Int) {
        var bucket = home(of: hash)
        while !buckets[bucket].isEmpty { bucket = (bucket &+ 1) & mask }
        buckets[bucket] = Bucket(slot: slot, hash: hash)
    }

    /// Rebuilds the table with `bucketCount` buckets (a power of two, more than the entries
    /// need).
    ///
    /// - Complexity: O(bucketCount).
    @usableFromInline
    mutating func grow(to bucketCount: Int) {
        let old = buckets
        buckets = Array(repeating: .empty, count: bucketCount)
        shift = 64 - bucketCount.trailingZeroBitCount
        for stored in old where !stored.isEmpty { place(slot: stored.slot, hash: slotHashes[stored.slot]) }
    }

    /// Makes room for `capacity` entries without growing.
    @usableFromInline
    package mutating func reserveCapacity(_ capacity: Int) {
        guard capacity > 0, capacity <= Int.max / 8 else { return }
        slotHashes.reserveCapacity(capacity)
        var bucketCount = Swift.max(8, buckets.count)
        while capacity &* 4 > bucketCount &* 3 { bucketCount &*= 2 }
        if bucketCount > buckets.count { grow(to: bucketCount) }
    }

    /// Forgets `slot`; does nothing if it is not recorded. Entries after it in its cluster move
    /// back, so that every probe still reaches its entry.
    ///
    /// - Complexity: O(1) expected: the length of one cluster.
    @inlinable
    package mutating func remove(slot: Int) {
        guard !buckets.isEmpty, slot < slotHashes.count else { return }
        var hole = home(of: slotHashes[slot])
        while buckets[hole].slot != slot {
            if buckets[hole].isEmpty { return }
            hole = (hole &+ 1) & mask
        }
        count &-= 1
        var next = hole
        while true {
            next = (next &+ 1) & mask
            let stored = buckets[next]
            if stored.isEmpty { break }
            // The entry at `next` may fill the hole unless its home lies cyclically after the hole,
            // up to `next`: then a probe from its home would not pass the hole.
            let home = home(of: slotHashes[stored.slot])
            let distanceToNext = (next &- home) & mask
            let distanceToHole = (hole &- home) & mask
            if distanceToHole < distanceToNext {
                buckets[hole] = stored
                hole = next
            }
        }
        buckets[hole] = .empty
    }

    /// Whether every recorded slot is found from its home by a probe; the first problem found,
    /// `nil` when there is none.
    ///
    /// - Complexity: O(buckets).
    package func invariantViolation() -> String? {
        var recorded = 0
        for (bucket, stored) in buckets.enumerated() where !stored.isEmpty {
            recorded += 1
            let slot = stored.slot
            guard slot < slotHashes.count, UInt32(truncatingIfNeeded: slotHashes[slot]) == stored.tag else {
                return "bucket \(bucket) holds slot \(slot) with a hash that is not the slot's"
            }
            var probe = home(of: slotHashes[slot])
            while probe != bucket {
                if buckets[probe].isEmpty { return "slot \(slot) sits past an empty bucket of its probe" }
                probe = (probe + 1) & mask
            }
        }
        guard recorded == count else { return "the table records \(recorded) slots, its count says \(count)" }
        guard buckets.isEmpty || count * 4 <= buckets.count * 3 else { return "the table is over three quarters full" }
        return nil
    }
}
