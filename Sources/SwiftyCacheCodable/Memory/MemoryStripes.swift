public import Synchronization

#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif

/// The memory tier split by key hash into stripes, each a ``MemoryTier`` under its own
/// ``ReadMostlyLock``, so that threads reading different keys do not queue on one lock, and
/// while nothing is written they write no memory in common at all: a hit reads its stripe
/// without the mutex, sets the value's reference bit (once) and counts itself in its thread's
/// slot. Writes (stores, removals, eviction, a read that finds an expired value) take the
/// stripe exclusively.
///
/// The limits stay global: the stripes keep running totals of their values and encoded bytes,
/// and when a store takes the totals over a limit, the stripe that grew gives up its least
/// recently used values first, then the next stripes. A working set that fits the limit stays
/// whole in memory; what goes first is the least recently used value of a stripe, not always
/// of the whole tier. Small tiers (fewer than `2 × valuesPerStripe` values, the default of 100
/// among them) keep one stripe; the count is a power of two, so that a key's stripe is its
/// hash's low bits (a division would cost a hit more than its lock).
@usableFromInline
struct MemoryStripes<Key: Hashable & Sendable, Value: Sendable>: Sendable {
    @usableFromInline let stripes: [ReadMostlyLock<MemoryTier<Key, Value>>]
    /// The stripe count minus one.
    @usableFromInline let stripeMask: Int
    @usableFromInline let totals: Totals
    @usableFromInline let countLimit: Int
    @usableFromInline let byteLimit: Int?

    /// The values and encoded bytes of every stripe, kept by each stripe's lock holder.
    @usableFromInline
    final class Totals: Sendable {
        @usableFromInline let count = Atomic<Int>(0)
        @usableFromInline let cost = Atomic<Int>(0)
        /// Changes other processes made to the directory, as the engine followed them (a cache
        /// that shares its directory): a value read or written before one of them is kept only
        /// if none came meanwhile (see ``othersChangesUnchanged(since:)``).
        @usableFromInline let othersChanges = Atomic<UInt64>(0)

        @usableFromInline init() {}
    }

    /// The counters each stripe's lock keeps per thread (``ReadMostlyLock/count(_:)``); memory
    /// hits are counter 0, which ``ReadMostlyLock/readCountingFound(_:)`` counts.
    @usableFromInline
    enum Counter {
        @usableFromInline static var memoryHits: Int { 0 }
        @usableFromInline static var diskHits: Int { 1 }
        @usableFromInline static var misses: Int { 2 }
    }

    /// The most stripes a tier is split into.
    static var stripeLimit: Int { 16 }
    /// The fewest values per stripe at the count limit.
    static var valuesPerStripe: Int { 256 }

    /// - Parameters:
    ///   - countLimit: The values kept, over all stripes.
    ///   - byteLimit: The encoded bytes of saved values kept, over all stripes.
    init(countLimit: Int, byteLimit: Int?) {
        let wanted = max(1, min(Self.stripeLimit, countLimit / Self.valuesPerStripe))
        let count = 1 << (Int.bitWidth - 1 - wanted.leadingZeroBitCount)
        stripeMask = count - 1
        // Each stripe alone may hold up to the whole limit; the totals bound them together.
        let clock = VersionClock()
        stripes = (0..<count).map { _ in
            ReadMostlyLock(MemoryTier(countLimit: countLimit, byteLimit: byteLimit, clock: clock))
        }
        totals = Totals()
        self.countLimit = countLimit
        self.byteLimit = byteLimit
    }

    /// Whether the tier keeps nothing (a limit of zero): reads then need no stripe at all.
    @inlinable
    var keepsNothing: Bool { countLimit <= 0 || byteLimit == 0 }

    /// The stripe that holds `key`.
    @inlinable
    func stripeIndex(for key: Key) -> Int {
        stripeMask == 0 ? 0 : stripeIndex(forHash: key.hashValue)
    }

    /// The stripe that holds the keys whose `hashValue` is `hash`.
    @inlinable
    func stripeIndex(forHash hash: Int) -> Int {
        hash & stripeMask
    }

    /// A memory hit: the value of `key` if it is in memory and cannot have expired, marked used
    /// and counted; `nil` otherwise (the caller goes on with ``find(_:now:)``).
    ///
    /// - Complexity: O(1): one hash of the key; no shared write unless the stripe is being
    ///   written to.
    @inlinable
    func freshHit(_ key: Key, clock: () -> Date) -> Value? {
        freshHit(key, hash: key.hashValue, clock: clock)
    }

    /// ``freshHit(_:clock:)`` given the key's `hashValue`.
    @inlinable
    func freshHit(_ key: Key, hash: Int, clock: () -> Date) -> Value? {
        stripes[stripeIndex(forHash: hash)].readCountingFound {
            $0.freshValue(key, hash: hash, clock: clock)
        }
    }

    /// As ``freshHit(_:clock:)``, for a value younger than `maxAge` (a fetch-through hit);
    /// counted as a hit when it returns one.
    ///
    /// - Complexity: O(1).
    @inlinable @inline(__always)
    func youngHit(_ key: Key, maxAge: Duration, clock: () -> Date) -> Value? {
        let hash = key.hashValue
        return stripes[stripeIndex(forHash: hash)].readCountingFound {
            $0.youngValue(key, hash: hash, maxAge: maxAge, clock: clock)
        }
    }

    /// As ``freshHit(_:clock:)``, at `now`, with the value's creation date in `created` (for
    /// fetch-through).
    ///
    /// - Complexity: O(1).
    @inlinable
    func freshDatedHit(_ key: Key, now: Date, created: inout Date) -> Value? {
        let hash = key.hashValue
        return stripes[stripeIndex(forHash: hash)].readCountingFound {
            $0.findDated(key, hash: hash, now: now, created: &created)
        }
    }

    /// What memory holds for `key` at `now`: a hit (marked used and counted), an expired value
    /// (removed from memory here if it is still the expired one; the caller counts it, since
    /// the `async` path goes on to the disk, which counts the entry's expiry there), or a miss
    /// (not counted: the disk may have it).
    ///
    /// - Complexity: O(1).
    @inlinable
    func find(_ key: Key, now: Date) -> MemoryTier<Key, Value>.Lookup {
        find(key, hash: key.hashValue, now: now)
    }

    /// ``find(_:now:)`` given the key's `hashValue`.
    @inlinable
    func find(_ key: Key, hash: Int, now: Date) -> MemoryTier<Key, Value>.Lookup {
        let stripe = stripeIndex(forHash: hash)
        let found = stripes[stripe].read { $0.find(key, hash: hash, now: now) }
        switch found {
        case .hit:
            stripes[stripe].count(Counter.memoryHits)
        case .expired:
            withLock(stripe: stripe) { _ = $0.removeIfExpired(key, now: now) }
        case .miss:
            break
        }
        return found
    }

    /// Counts a read that found nothing, in memory or on disk.
    @inlinable
    func countMiss(_ key: Key) { countMiss(hash: key.hashValue) }

    /// Counts a read of the key whose `hashValue` is `hash` that found nothing.
    @inlinable
    func countMiss(hash: Int) { stripes[stripeIndex(forHash: hash)].count(Counter.misses) }

    /// Counts a read answered from disk.
    @inlinable
    func countDiskHit(_ key: Key) { countDiskHit(hash: key.hashValue) }

    /// Counts a read of the key whose `hashValue` is `hash` answered from disk.
    @inlinable
    func countDiskHit(hash: Int) { stripes[stripeIndex(forHash: hash)].count(Counter.diskHits) }

    /// Keeps a value read from disk unless the tier keeps nothing or a newer value arrived
    /// meanwhile, or (with `othersSince`, where other processes write the directory too)
    /// another process changed the directory since the read began. Returns whether it stored
    /// the value, so that the caller trims.
    @inlinable
    func storeLoaded(
        _ value: Value, forKey key: Key, cost: Int, expires: Date?, created: Date, othersSince: UInt64? = nil
    ) -> Bool {
        storeLoaded(
            value, forKey: key, hash: key.hashValue, cost: cost, expires: expires, created: created,
            othersSince: othersSince)
    }

    /// ``storeLoaded(_:forKey:cost:expires:created:othersSince:)`` given the key's `hashValue`.
    @inlinable
    func storeLoaded(
        _ value: Value, forKey key: Key, hash: Int, cost: Int, expires: Date?, created: Date,
        othersSince: UInt64? = nil
    ) -> Bool {
        guard !keepsNothing else { return false }
        return withLock(forHash: hash) {
            guard othersChangesUnchanged(since: othersSince) else { return false }
            return $0.storeLoaded(value, forKey: key, hash: hash, cost: cost, expires: expires, created: created)
        }
    }

    /// The count of other processes' changes followed so far, for a read or write that must
    /// not keep in memory what one of them replaced meanwhile; `nil` where nobody else writes.
    @inlinable
    func othersChangeCount(if sharesDirectory: Bool) -> UInt64? {
        sharesDirectory ? totals.othersChanges.load(ordering: .sequentiallyConsistent) : nil
    }

    /// Whether no change of another process was followed since `count` (always, for `nil`).
    /// Checked under a stripe's lock: a change is counted before its key is dropped under
    /// that lock, so a value checked here either is dropped after, or is not stored.
    @inlinable
    func othersChangesUnchanged(since count: UInt64?) -> Bool {
        count.map { $0 == totals.othersChanges.load(ordering: .sequentiallyConsistent) } ?? true
    }

    /// Drops the saved value of `key` that another process changed on disk (an unsaved one
    /// stays: its `save()` writes over the other's, last writer wins).
    func dropChangedByOthers(_ key: Key) {
        totals.othersChanges.add(1, ordering: .sequentiallyConsistent)
        withLock(for: key) { _ = $0.removeIfSaved(key) }
    }

    /// Counts a change of another process to an entry whose key this process never read or
    /// wrote (so none of its values is in memory).
    func noteChangedByOthers() {
        totals.othersChanges.add(1, ordering: .sequentiallyConsistent)
    }

    /// Drops every saved value, after a change of another process whose keys are not known.
    func dropAllChangedByOthers() {
        totals.othersChanges.add(1, ordering: .sequentiallyConsistent)
        updateEach { $0.removeAllSaved() }
    }

    /// Runs `body` on the stripe that holds `key`, with exclusive access.
    ///
    /// - Complexity: O(1): one hash of the key when there are several stripes.
    @inlinable
    func withLock<Result>(for key: Key, _ body: (inout MemoryTier<Key, Value>) -> Result) -> Result {
        withLock(stripe: stripeIndex(for: key), body)
    }

    /// Runs `body` on the stripe that holds the keys whose `hashValue` is `hash`, with exclusive
    /// access: for a caller that hashed its key once and hands the hash to the tier too.
    @inlinable
    func withLock<Result>(forHash hash: Int, _ body: (inout MemoryTier<Key, Value>) -> Result) -> Result {
        withLock(stripe: stripeIndex(forHash: hash), body)
    }

    /// Runs `body` on the stripe that holds `key` under its mutex, without excluding readers:
    /// `body` only reads.
    @inlinable
    func inspect<Result>(for key: Key, _ body: (borrowing MemoryTier<Key, Value>) -> Result) -> Result {
        stripes[stripeIndex(for: key)].inspect { body($0) }
    }

    /// Runs `body` on the stripe that holds the keys whose `hashValue` is `hash` under its mutex,
    /// without excluding readers: `body` only reads.
    @inlinable
    func inspect<Result>(forHash hash: Int, _ body: (borrowing MemoryTier<Key, Value>) -> Result) -> Result {
        stripes[stripeIndex(forHash: hash)].inspect { body($0) }
    }

    /// Runs `body` on stripe `index` with exclusive access, and carries its change of values
    /// and bytes into the totals.
    @inlinable
    func withLock<Result>(stripe index: Int, _ body: (inout MemoryTier<Key, Value>) -> Result) -> Result {
        guard stripes.count > 1 else { return stripes[0].withLock(body) }
        return stripes[index].withLock { tier in
            let count = tier.count
            let cost = tier.totalCost
            let result = body(&tier)
            if tier.count != count { totals.count.add(tier.count - count, ordering: .relaxed) }
            if tier.totalCost != cost { totals.cost.add(tier.totalCost - cost, ordering: .relaxed) }
            return result
        }
    }

    /// Runs `body` on every stripe in turn, each with exclusive access.
    func updateEach(_ body: (inout MemoryTier<Key, Value>) -> Void) {
        for index in stripes.indices { withLock(stripe: index, body) }
    }

    /// What `body` returns for every stripe, concatenated; each stripe is read under its mutex
    /// without excluding readers.
    @inlinable
    func flatMap<Element>(_ body: (borrowing MemoryTier<Key, Value>) -> [Element]) -> [Element] {
        var result: [Element] = []
        for stripe in stripes { result += stripe.inspect { body($0) } }
        return result
    }

    /// Every unsaved value, each stripe's oldest first.
    @inlinable
    var unsaved: [MemoryTier<Key, Value>.PendingSave] {
        var result: [MemoryTier<Key, Value>.PendingSave] = []
        for stripe in stripes { stripe.inspect { $0.appendUnsaved(to: &result) } }
        return result
    }

    /// The values in memory.
    var count: Int { stripes.reduce(0) { $0 + $1.inspect { $0.count } } }

    /// The counters of every stripe, added up, with the hits, misses and disk reads its
    /// threads counted.
    var statistics: ObjectCacheStatistics {
        var total = ObjectCacheStatistics()
        for stripe in stripes {
            total.add(stripe.inspect { $0.statistics })
            total.memoryHits += stripe.total(Counter.memoryHits)
            total.diskHits += stripe.total(Counter.diskHits)
            total.misses += stripe.total(Counter.misses)
        }
        return total
    }

    /// Counts events that belong to no key (the first stripe keeps them).
    @inlinable
    func count(_ body: (inout ObjectCacheStatistics) -> Void) {
        withLock(stripe: 0) { body(&$0.statistics) }
    }

    /// Applies the limits after a store of `key`: the stripe of `key` gives up its least
    /// recently used values first, then the next stripes. Returns the unsaved values that
    /// must be written before they can go.
    ///
    /// - Complexity: O(evicted + unsaved values passed over + stripes).
    @inlinable
    func trim(after key: Key?) -> [MemoryTier<Key, Value>.PendingSave] {
        trim(afterHash: stripes.count > 1 ? key?.hashValue : nil)
    }

    /// ``trim(after:)`` given the stored key's `hashValue` (`nil`: no key).
    @inlinable
    func trim(afterHash hash: Int?) -> [MemoryTier<Key, Value>.PendingSave] {
        guard stripes.count > 1 else { return withLock(stripe: 0) { $0.trim() } }
        var mustSave: [MemoryTier<Key, Value>.PendingSave] = []
        let first = hash.map(stripeIndex(forHash:)) ?? 0
        for offset in stripes.indices {
            let excessCount = totals.count.load(ordering: .relaxed) - countLimit - mustSave.count
            let excessBytes = byteLimit.map { totals.cost.load(ordering: .relaxed) - $0 } ?? 0
            guard excessCount > 0 || excessBytes > 0 else { break }
            let handedBack = withLock(stripe: (first + offset) % stripes.count) {
                $0.evict(count: max(0, excessCount), bytes: max(0, excessBytes))
            }
            if !handedBack.isEmpty { mustSave += handedBack }
        }
        return mustSave
    }
}

extension ObjectCacheStatistics {
    /// Adds another set of counters to these.
    mutating func add(_ other: ObjectCacheStatistics) {
        memoryHits += other.memoryHits
        diskHits += other.diskHits
        misses += other.misses
        decodeFailures += other.decodeFailures
        migrations += other.migrations
        memoryEvictions += other.memoryEvictions
        saves += other.saves
        expirations += other.expirations
    }
}
