#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif

/// The decoded values an ``ObjectCache`` keeps in memory, bounded by count and optionally by
/// encoded bytes, evicted least recently used first with a second chance (CLOCK): a store makes
/// a value the newest; a hit only sets the value's reference bit (``ReferenceBits``), so that
/// readers write nothing shared; eviction walks from the eldest and moves a value whose bit is
/// set to the newest end, clearing the bit, instead of evicting it. A value read since eviction
/// last passed it therefore outlives every value not read since. Values written with
/// `setUnsaved` are *unsaved* until saved; the tier never drops an unsaved value: it hands it back
/// for saving instead.
///
/// Guarded by one stripe's ``ReadMostlyLock``: the non-mutating reads (``freshValue(_:hash:clock:)``,
/// ``find(_:hash:now:)``) may run concurrently with each other; everything else is exclusive.
/// All decisions are here and testable without a disk.
///
/// Not copyable, so that a reader borrows it in place: a copy would retain every array it holds,
/// on every read.
@usableFromInline
struct MemoryTier<Key: Hashable & Sendable, Value: Sendable>: ~Copyable, Sendable {
    @usableFromInline
    struct Item: Sendable {
        @usableFromInline var value: Value
        @usableFromInline var isUnsaved: Bool
        /// Bumped on every change, so a save that raced a newer write does not mark it saved.
        @usableFromInline var version: UInt64
        /// Encoded bytes, counted against the byte limit; 0 while unsaved (not yet encoded).
        @usableFromInline var cost: Int
        @usableFromInline var expires: Date?
        /// When the value was written (for a value read from disk, its entry's creation date):
        /// the age fetch-through compares with its `maxAge`.
        @usableFromInline var created: Date

        @inlinable
        init(value: Value, isUnsaved: Bool, version: UInt64, cost: Int, expires: Date?, created: Date) {
            self.value = value
            self.isUnsaved = isUnsaved
            self.version = version
            self.cost = cost
            self.expires = expires
            self.created = created
        }
    }

    /// A value to write to disk, as it was when picked, with its key's `hashValue`: the save
    /// finds the value's stripe and slot again without hashing the key.
    @usableFromInline
    struct PendingSave: Sendable {
        @usableFromInline var key: Key
        @usableFromInline var hash: Int
        @usableFromInline var value: Value
        @usableFromInline var version: UInt64
        @usableFromInline var expires: Date?

        @inlinable
        init(key: Key, hash: Int, value: Value, version: UInt64, expires: Date?) {
            self.key = key
            self.hash = hash
            self.value = value
            self.version = version
            self.expires = expires
        }
    }

    @usableFromInline let countLimit: Int
    @usableFromInline let byteLimit: Int?
    @usableFromInline var items = LRUDictionary<Key, Item>()
    /// Which values were hit since eviction last passed them, by slot of `items`.
    @usableFromInline let referenced = ReferenceBits()
    @usableFromInline var totalCost = 0
    /// Hands out the versions of stored values; shared by the stripes of one tier.
    @usableFromInline let clock: VersionClock
    @usableFromInline var statistics = ObjectCacheStatistics()

    init(countLimit: Int, byteLimit: Int?, clock: VersionClock = VersionClock()) {
        self.clock = clock
        // The table numbers its slots in 32 bits; half of that leaves room for the unsaved
        // values a trim hands back before they go.
        self.countLimit = min(countLimit, HashBuckets.slotLimit / 2)
        self.byteLimit = byteLimit
    }

    /// The fast path of a read: a live value that cannot have expired, marked used; `nil` sends
    /// the caller to ``find(_:hash:now:)``. The clock is read only for values that carry an
    /// expiry date. It changes nothing but the value's reference bit, so readers may call it
    /// concurrently; the caller counts the hit.
    ///
    /// - Complexity: O(1).
    /// - Parameter hash: The key's `hashValue`, computed once by the caller.
    @inlinable
    func freshValue(_ key: Key, hash: Int, clock: () -> Date) -> Value? {
        guard let index = items.index(of: key, hash: hash), let item = items.value(at: index) else { return nil }
        if let expires = item.expires, expires <= clock() { return nil }
        referenced.set(index)
        return item.value
    }

    @usableFromInline
    enum Lookup {
        case hit(Value)
        case expired(wasUnsaved: Bool)
        case miss
    }

    /// Finds a value and marks it used if it is live; an expired one is left for the caller to
    /// remove (``removeIfExpired(_:now:)``). Changes nothing but the reference bit, as
    /// ``freshValue(_:hash:clock:)``; the caller counts the hit. `hash` is the key's
    /// `hashValue`, computed once by the caller.
    ///
    /// - Complexity: O(1), without hashing the key.
    @inlinable
    func find(_ key: Key, hash: Int, now: Date) -> Lookup {
        guard let index = items.index(of: key, hash: hash), let item = items.value(at: index) else { return .miss }
        if let expires = item.expires, expires <= now { return .expired(wasUnsaved: item.isUnsaved) }
        referenced.set(index)
        return .hit(item.value)
    }

    /// As ``find(_:hash:now:)``, with the value's creation date in `created`: for
    /// fetch-through, which compares its age with a `maxAge`. (An `inout` rather than a tuple
    /// result: a tuple of a generic value costs a lookup of its metadata in the runtime.)
    ///
    /// - Complexity: O(1).
    @inlinable
    func findDated(_ key: Key, hash: Int? = nil, now: Date, created: inout Date) -> Value? {
        let found = hash.map { items.index(of: key, hash: $0) } ?? items.index(of: key)
        guard let index = found, let item = items.value(at: index) else { return nil }
        if let expires = item.expires, expires <= now { return nil }
        referenced.set(index)
        created = item.created
        return item.value
    }

    /// The value of `key` if memory holds it unexpired and younger than `maxAge`, marked used;
    /// `nil` otherwise (a miss, or a value fetch-through must look at again). The clock is read
    /// only once a value is found: a fetch-through hit costs a plain hit and this one read.
    ///
    /// - Complexity: O(1), without hashing the key.
    @inlinable @inline(__always)
    func youngValue(_ key: Key, hash: Int, maxAge: Duration, clock: () -> Date) -> Value? {
        guard let index = items.index(of: key, hash: hash), let item = items.value(at: index) else { return nil }
        let now = clock()
        if let expires = item.expires, expires <= now { return nil }
        guard maxAge.exceeds(age: now.timeIntervalSince(item.created)) else { return nil }
        referenced.set(index)
        return item.value
    }

    /// Removes the value of `key` if it has expired by `now` (it may have been replaced since
    /// a reader found it expired). Returns whether it removed it.
    @inlinable
    mutating func removeIfExpired(_ key: Key, now: Date) -> Bool {
        guard let index = items.index(of: key), let expires = items.value(at: index)?.expires, expires <= now else {
            return false
        }
        remove(key)
        return true
    }

    @inlinable
    func contains(_ key: Key) -> Bool { items.index(of: key) != nil }

    /// Whether a value for `key` is in memory and fresh, without touching or counting it.
    ///
    /// - Complexity: O(1).
    @inlinable
    func peek(_ key: Key, now: Date) -> Lookup {
        guard let index = items.index(of: key), let item = items.value(at: index) else { return .miss }
        if let expires = item.expires, expires <= now { return .expired(wasUnsaved: item.isUnsaved) }
        return .hit(item.value)
    }

    /// Stores a value, replacing any other, and returns its version.
    @discardableResult
    @inlinable
    mutating func store(
        _ value: Value, forKey key: Key, isUnsaved: Bool, cost: Int, expires: Date?, created: Date
    ) -> UInt64 {
        store(
            value, forKey: key, hash: key.hashValue, isUnsaved: isUnsaved, cost: cost, expires: expires,
            created: created)
    }

    /// ``store(_:forKey:isUnsaved:cost:expires:created:)`` given the key's `hashValue`.
    ///
    /// - Complexity: O(1) amortized, without hashing the key.
    @discardableResult
    @inlinable
    mutating func store(
        _ value: Value, forKey key: Key, hash: Int, isUnsaved: Bool, cost: Int, expires: Date?, created: Date
    ) -> UInt64 {
        let version = clock.tick()
        let item = Item(
            value: value, isUnsaved: isUnsaved, version: version, cost: isUnsaved ? 0 : cost, expires: expires,
            created: created)
        if let index = items.index(of: key, hash: hash) {
            totalCost -= items.withValue(at: index) { $0.cost } ?? 0
            items.update(at: index) { $0 = item }
            items.touch(index)
        } else {
            let index = items.insert(item, forKey: key, hash: hash)
            referenced.reserve(index)
            _ = referenced.clear(index)  // a slot reused from a removed value
        }
        totalCost += item.cost
        return version
    }

    /// Stores a value read from disk unless a newer one arrived meanwhile, or the tier keeps
    /// nothing (a limit of zero). Returns whether it stored it, so that the caller trims.
    @inlinable
    mutating func storeLoaded(_ value: Value, forKey key: Key, cost: Int, expires: Date?, created: Date) -> Bool {
        storeLoaded(value, forKey: key, hash: key.hashValue, cost: cost, expires: expires, created: created)
    }

    /// ``storeLoaded(_:forKey:cost:expires:created:)`` given the key's `hashValue`.
    @inlinable
    mutating func storeLoaded(
        _ value: Value, forKey key: Key, hash: Int, cost: Int, expires: Date?, created: Date
    ) -> Bool {
        guard countLimit > 0, byteLimit != 0, items.index(of: key, hash: hash) == nil else { return false }
        store(value, forKey: key, hash: hash, isUnsaved: false, cost: cost, expires: expires, created: created)
        return true
    }

    /// Keeps a value just written through to disk, saved, replacing any older copy; a tier
    /// that keeps nothing (a limit of zero) only drops the older copy. Returns whether it
    /// stored the value, so that the caller trims.
    @inlinable
    mutating func storeWritten(_ value: Value, forKey key: Key, cost: Int, expires: Date?, created: Date) -> Bool {
        storeWritten(value, forKey: key, hash: key.hashValue, cost: cost, expires: expires, created: created)
    }

    /// ``storeWritten(_:forKey:cost:expires:created:)`` given the key's `hashValue`.
    @inlinable
    mutating func storeWritten(
        _ value: Value, forKey key: Key, hash: Int, cost: Int, expires: Date?, created: Date
    ) -> Bool {
        guard countLimit > 0, byteLimit != 0 else {
            remove(key, hash: hash)
            return false
        }
        store(value, forKey: key, hash: hash, isUnsaved: false, cost: cost, expires: expires, created: created)
        return true
    }

    /// Whether the value of `key` is still the unsaved one of `version`: a save writes it only
    /// then (a newer write is on disk already, or will be saved in turn).
    ///
    /// - Complexity: O(1).
    @inlinable
    func holdsUnsaved(_ key: Key, hash: Int, version: UInt64) -> Bool {
        guard let index = items.index(of: key, hash: hash) else { return false }
        return items.withValue(at: index) { $0.isUnsaved && $0.version == version } ?? false
    }

    /// Marks a value saved if it is still the version that was written.
    @inlinable
    mutating func markSaved(_ key: Key, version: UInt64, cost: Int) {
        markSaved(key, hash: key.hashValue, version: version, cost: cost)
    }

    /// ``markSaved(_:version:cost:)`` given the key's `hashValue`.
    @inlinable
    mutating func markSaved(_ key: Key, hash: Int, version: UInt64, cost: Int) {
        guard let index = items.index(of: key, hash: hash),
            let oldCost = items.withValue(at: index, { $0.version == version ? $0.cost : nil }) ?? nil
        else {
            return
        }
        totalCost += cost - oldCost
        items.update(at: index) {
            $0.isUnsaved = false
            $0.cost = cost
        }
    }

    @discardableResult
    @inlinable
    mutating func remove(_ key: Key) -> Item? {
        remove(key, hash: key.hashValue)
    }

    /// ``remove(_:)`` given the key's `hashValue`.
    @discardableResult
    @inlinable
    mutating func remove(_ key: Key, hash: Int) -> Item? {
        guard let index = items.index(of: key, hash: hash), let item = items.remove(at: index) else { return nil }
        totalCost -= item.cost
        return item
    }

    /// Drops a value if it is saved.
    @inlinable
    mutating func removeIfSaved(_ key: Key) -> Bool {
        removeIfSaved(key, hash: key.hashValue)
    }

    /// ``removeIfSaved(_:)`` given the key's `hashValue`.
    @inlinable
    mutating func removeIfSaved(_ key: Key, hash: Int) -> Bool {
        guard let index = items.index(of: key, hash: hash), items.withValue(at: index, { !$0.isUnsaved }) == true else {
            return false
        }
        totalCost -= items.remove(at: index)?.cost ?? 0
        return true
    }

    /// Drops every saved value; unsaved ones stay.
    ///
    /// - Complexity: O(values).
    mutating func removeAllSaved() {
        let saved = items.indicesInStorageOrder.compactMap { index -> Key? in
            guard let key = items.key(at: index), let item = items.value(at: index), !item.isUnsaved else { return nil }
            return key
        }
        for key in saved { remove(key) }
    }

    mutating func removeAll() {
        items.removeAll()
        totalCost = 0
    }

    /// Every unsaved value, oldest first.
    /// - Complexity: O(n) in the values in memory.
    @inlinable
    var unsaved: [PendingSave] {
        var result: [PendingSave] = []
        appendUnsaved(to: &result)
        return result
    }

    /// Appends every unsaved value, oldest first, to `result`: the stripes of a tier fill one
    /// array, none copied from one of its own.
    /// - Complexity: O(n) in the values in memory.
    @inlinable
    func appendUnsaved(to result: inout [PendingSave]) {
        for index in items.indicesInLRUOrder {
            guard let key = items.key(at: index), let item = items.value(at: index), item.isUnsaved else { continue }
            result.append(
                PendingSave(
                    key: key, hash: items.hash(at: index), value: item.value, version: item.version,
                    expires: item.expires))
        }
    }

    @inlinable
    func pendingSave(for key: Key) -> PendingSave? {
        let hash = key.hashValue
        guard let index = items.index(of: key, hash: hash), let item = items.value(at: index), item.isUnsaved else {
            return nil
        }
        return PendingSave(key: key, hash: hash, value: item.value, version: item.version, expires: item.expires)
    }

    @inlinable var count: Int { items.count }

    /// The keys in memory with their versions, and whether each was read since eviction last
    /// passed it: for the warm start's record.
    ///
    /// - Complexity: O(values in memory).
    func recency() -> [(key: Key, version: UInt64, isReferenced: Bool)] {
        items.indicesInLRUOrder.compactMap { index in
            guard let key = items.key(at: index), let item = items.value(at: index) else { return nil }
            return (key, item.version, referenced.isSet(index))
        }
    }
}
