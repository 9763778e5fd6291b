public import SwiftyCacheCore

#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif

/// The decoded values an ``ObjectCache`` keeps in memory, in LRU order, bounded by count and
/// optionally by encoded bytes. Values written with the subscript are *unsaved* until saved;
/// the tier never drops an unsaved value: it hands it back for saving instead.
///
/// Guarded by the object cache's lock; all decisions are here and testable without a disk.
@usableFromInline
struct MemoryTier<Key: Hashable & Sendable, Value: Sendable>: Sendable {
    @usableFromInline
    struct Item: Sendable {
        @usableFromInline var value: Value
        var isUnsaved: Bool
        /// Bumped on every change, so a save that raced a newer write does not mark it saved.
        var version: UInt64
        /// Encoded bytes, counted against the byte limit; 0 while unsaved (not yet encoded).
        var cost: Int
        @usableFromInline var expires: Date?
    }

    /// A value to write to disk, as it was when picked.
    struct PendingSave: Sendable {
        var key: Key
        var value: Value
        var version: UInt64
        var expires: Date?
    }

    let countLimit: Int
    let byteLimit: Int?
    @usableFromInline private(set) var items = LRUDictionary<Key, Item>()
    @usableFromInline private(set) var totalCost = 0
    private var nextVersion: UInt64 = 1
    @usableFromInline var statistics = ObjectCacheStatistics()

    init(countLimit: Int, byteLimit: Int?) {
        self.countLimit = countLimit
        self.byteLimit = byteLimit
    }

    /// The fast path of a read: a live value that cannot have expired, made the most recently
    /// used and counted; `nil` sends the caller to the full lookup. The clock is read only for
    /// values that carry an expiry date.
    ///
    /// - Complexity: O(1).
    /// - Parameter hash: The key's `hashValue`, computed once by the caller.
    @inlinable
    mutating func freshHit(_ key: Key, hash: Int, clock: () -> Date) -> Value? {
        guard let index = items.index(of: key, hash: hash) else { return nil }
        // Read in place: only the value is copied out, not the whole item.
        let found: Value?? = items.update(at: index) { item -> Value? in
            if let expires = item.expires, expires <= clock() { return nil }
            return item.value
        }
        guard case .some(.some(let value)) = found else { return nil }
        items.touch(index)
        statistics.memoryHits += 1
        return value
    }

    enum Lookup {
        case hit(Value)
        case expired(wasUnsaved: Bool)
        case miss
    }

    /// Finds a live value, makes it the most recently used and counts the hit. `hash` is the
    /// key's `hashValue`, computed once by the caller.
    ///
    /// - Complexity: O(1), without hashing the key.
    mutating func lookup(_ key: Key, hash: Int, now: Date) -> Lookup {
        guard let index = items.index(of: key, hash: hash), let item = items.value(at: index) else { return .miss }
        if let expires = item.expires, expires <= now {
            remove(key)
            return .expired(wasUnsaved: item.isUnsaved)
        }
        items.touch(index)
        statistics.memoryHits += 1
        return .hit(item.value)
    }

    func contains(_ key: Key) -> Bool { items.index(of: key) != nil }

    /// Whether a value for `key` is in memory and fresh, without touching or counting it.
    ///
    /// - Complexity: O(1).
    func peek(_ key: Key, now: Date) -> Lookup {
        guard let index = items.index(of: key), let item = items.value(at: index) else { return .miss }
        if let expires = item.expires, expires <= now { return .expired(wasUnsaved: item.isUnsaved) }
        return .hit(item.value)
    }

    /// Stores a value, replacing any other, and returns its version.
    @discardableResult
    mutating func store(_ value: Value, forKey key: Key, isUnsaved: Bool, cost: Int, expires: Date?) -> UInt64 {
        let version = nextVersion
        nextVersion += 1
        let item = Item(
            value: value, isUnsaved: isUnsaved, version: version, cost: isUnsaved ? 0 : cost, expires: expires)
        if let index = items.index(of: key) {
            totalCost -= items.value(at: index)?.cost ?? 0
            items.update(at: index) { $0 = item }
            items.touch(index)
        } else {
            items.insert(item, forKey: key)
        }
        totalCost += item.cost
        return version
    }

    /// Stores a value read from disk unless a newer one arrived meanwhile, or the tier keeps
    /// nothing (a limit of zero). Returns whether it stored it, so that the caller trims.
    mutating func storeLoaded(_ value: Value, forKey key: Key, cost: Int, expires: Date?) -> Bool {
        guard countLimit > 0, byteLimit != 0, items.index(of: key) == nil else { return false }
        store(value, forKey: key, isUnsaved: false, cost: cost, expires: expires)
        return true
    }

    /// Keeps a value just written through to disk, saved, replacing any older copy; a tier
    /// that keeps nothing (a limit of zero) only drops the older copy. Returns whether it
    /// stored the value, so that the caller trims.
    mutating func storeWritten(_ value: Value, forKey key: Key, cost: Int, expires: Date?) -> Bool {
        guard countLimit > 0, byteLimit != 0 else {
            remove(key)
            return false
        }
        store(value, forKey: key, isUnsaved: false, cost: cost, expires: expires)
        return true
    }

    /// Marks a value saved if it is still the version that was written.
    mutating func markSaved(_ key: Key, version: UInt64, cost: Int) {
        guard let index = items.index(of: key), let item = items.value(at: index), item.version == version else {
            return
        }
        totalCost += cost - item.cost
        items.update(at: index) {
            $0.isUnsaved = false
            $0.cost = cost
        }
    }

    @discardableResult
    mutating func remove(_ key: Key) -> Item? {
        guard let index = items.index(of: key), let item = items.remove(at: index) else { return nil }
        totalCost -= item.cost
        return item
    }

    /// Drops a value if it is saved (or its version is the one given, just saved).
    mutating func removeIfSaved(_ key: Key) -> Bool {
        guard let index = items.index(of: key), let item = items.value(at: index), !item.isUnsaved else { return false }
        remove(key)
        return true
    }

    mutating func removeAll() {
        items.removeAll()
        totalCost = 0
    }

    /// Every unsaved value, oldest first.
    /// - Complexity: O(n) in the values in memory.
    var unsaved: [PendingSave] {
        items.indicesInLRUOrder.compactMap { index in
            guard let key = items.key(at: index), let item = items.value(at: index), item.isUnsaved else { return nil }
            return PendingSave(key: key, value: item.value, version: item.version, expires: item.expires)
        }
    }

    func pendingSave(for key: Key) -> PendingSave? {
        guard let index = items.index(of: key), let item = items.value(at: index), item.isUnsaved else { return nil }
        return PendingSave(key: key, value: item.value, version: item.version, expires: item.expires)
    }

    /// Evicts least recently used saved values until the limits hold. Unsaved values in the
    /// way are returned, still in memory, for the caller to save and then evict.
    ///
    /// - Complexity: O(evicted + unsaved values passed over).
    mutating func trim() -> [PendingSave] {
        evict(count: max(0, items.count - countLimit), bytes: byteLimit.map { max(0, totalCost - $0) } ?? 0)
    }

    /// Evicts least recently used saved values until `count` values are accounted for and
    /// `bytes` encoded bytes freed. Unsaved values in the way count towards `count` and are
    /// returned, still in memory, for the caller to save and then evict.
    ///
    /// - Complexity: O(evicted + unsaved values passed over).
    mutating func evict(count: Int, bytes: Int) -> [PendingSave] {
        var mustSave: [PendingSave] = []
        var removed = 0
        var freed = 0
        var cursor = items.eldest
        while cursor != -1 && (removed + mustSave.count < count || freed < bytes) {
            let next = items.indexAfter(cursor)
            if let key = items.key(at: cursor), let item = items.value(at: cursor) {
                if item.isUnsaved {
                    mustSave.append(
                        PendingSave(key: key, value: item.value, version: item.version, expires: item.expires))
                } else {
                    freed += item.cost
                    removed += 1
                    remove(key)
                    statistics.memoryEvictions += 1
                }
            }
            cursor = next
        }
        return mustSave
    }

    @inlinable var count: Int { items.count }
}
