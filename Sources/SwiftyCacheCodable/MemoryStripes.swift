public import SwiftyCacheCore
public import Synchronization

/// The memory tier split by key hash into stripes, each a ``MemoryTier`` under its own lock,
/// so that threads reading different keys do not queue on one lock (and do not bounce one
/// cache line between cores).
///
/// The limits stay global: the stripes keep running totals of their values and encoded bytes,
/// and when a store takes the totals over a limit, the stripe that grew gives up its least
/// recently used values first, then the next stripes. A working set that fits the limit stays
/// whole in memory; what goes first is the least recently used value of a stripe, not always
/// of the whole tier. Small tiers (fewer than `2 × valuesPerStripe` values, the default of 100
/// among them) keep one stripe and an exact LRU order.
@usableFromInline
struct MemoryStripes<Key: Hashable & Sendable, Value: Sendable>: Sendable {
    @usableFromInline let stripes: [LockedState<MemoryTier<Key, Value>>]
    @usableFromInline let totals: Totals
    let countLimit: Int
    let byteLimit: Int?

    /// The values and encoded bytes of every stripe, kept by each stripe's lock holder.
    @usableFromInline
    final class Totals: Sendable {
        @usableFromInline let count = Atomic<Int>(0)
        @usableFromInline let cost = Atomic<Int>(0)

        @usableFromInline init() {}
    }

    /// The most stripes a tier is split into.
    static var stripeLimit: Int { 16 }
    /// The fewest values per stripe at the count limit.
    static var valuesPerStripe: Int { 256 }

    /// - Parameters:
    ///   - countLimit: The values kept, over all stripes.
    ///   - byteLimit: The encoded bytes of saved values kept, over all stripes.
    init(countLimit: Int, byteLimit: Int?) {
        let count = max(1, min(Self.stripeLimit, countLimit / Self.valuesPerStripe))
        // Each stripe alone may hold up to the whole limit; the totals bound them together.
        stripes = (0..<count).map { _ in LockedState(MemoryTier(countLimit: countLimit, byteLimit: byteLimit)) }
        totals = Totals()
        self.countLimit = countLimit
        self.byteLimit = byteLimit
    }

    /// The stripe that holds `key`.
    @inlinable
    func stripeIndex(for key: Key) -> Int {
        stripes.count == 1 ? 0 : stripeIndex(forHash: key.hashValue)
    }

    /// The stripe that holds the keys whose `hashValue` is `hash`.
    @inlinable
    func stripeIndex(forHash hash: Int) -> Int {
        stripes.count == 1 ? 0 : Int(UInt(bitPattern: hash) % UInt(stripes.count))
    }

    /// Runs `body` on the stripe that holds `key`, under its lock, passing it the key's
    /// `hashValue` too, so that the key is hashed once for picking the stripe and for the
    /// stripe's own table (the read path's calls).
    ///
    /// - Complexity: O(1): one hash of the key.
    @inlinable
    func withLock<Result>(hashing key: Key, _ body: (inout MemoryTier<Key, Value>, Int) -> Result) -> Result {
        let hash = key.hashValue
        return withLock(stripe: stripeIndex(forHash: hash)) { body(&$0, hash) }
    }

    /// Runs `body` on the stripe that holds `key`, under its lock.
    ///
    /// - Complexity: O(1): one hash of the key when there are several stripes.
    @inlinable
    func withLock<Result>(for key: Key, _ body: (inout MemoryTier<Key, Value>) -> Result) -> Result {
        withLock(stripe: stripeIndex(for: key), body)
    }

    /// Runs `body` on stripe `index` under its lock, and carries its change of values and
    /// bytes into the totals.
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

    /// Runs `body` on every stripe in turn, each under its own lock.
    func updateEach(_ body: (inout MemoryTier<Key, Value>) -> Void) {
        for index in stripes.indices { withLock(stripe: index, body) }
    }

    /// What `body` returns for every stripe, concatenated.
    func flatMap<Element>(_ body: (inout MemoryTier<Key, Value>) -> [Element]) -> [Element] {
        var result: [Element] = []
        for index in stripes.indices { result += withLock(stripe: index, body) }
        return result
    }

    /// Every unsaved value, each stripe's oldest first.
    var unsaved: [MemoryTier<Key, Value>.PendingSave] { flatMap { $0.unsaved } }

    /// The values in memory.
    var count: Int {
        var total = 0
        updateEach { total += $0.count }
        return total
    }

    /// The counters of every stripe, added up.
    var statistics: ObjectCacheStatistics {
        var total = ObjectCacheStatistics()
        updateEach { total.add($0.statistics) }
        return total
    }

    /// Counts events that belong to no key (the first stripe keeps them).
    func count(_ body: (inout ObjectCacheStatistics) -> Void) {
        withLock(stripe: 0) { body(&$0.statistics) }
    }

    /// Applies the limits after a store of `key`: the stripe of `key` gives up its least
    /// recently used values first, then the next stripes. Returns the unsaved values that
    /// must be written before they can go.
    ///
    /// - Complexity: O(evicted + unsaved values passed over + stripes).
    func trim(after key: Key?) -> [MemoryTier<Key, Value>.PendingSave] {
        guard stripes.count > 1 else { return stripes[0].withLock { $0.trim() } }
        var mustSave: [MemoryTier<Key, Value>.PendingSave] = []
        let first = key.map(stripeIndex(for:)) ?? 0
        for offset in stripes.indices {
            let excessCount = totals.count.load(ordering: .relaxed) - countLimit - mustSave.count
            let excessBytes = byteLimit.map { totals.cost.load(ordering: .relaxed) - $0 } ?? 0
            guard excessCount > 0 || excessBytes > 0 else { break }
            mustSave += withLock(stripe: (first + offset) % stripes.count) {
                $0.evict(count: max(0, excessCount), bytes: max(0, excessBytes))
            }
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
        memoryEvictions += other.memoryEvictions
        saves += other.saves
        expirations += other.expirations
    }
}
