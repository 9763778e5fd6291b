import SwiftyCacheCore

#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif

extension ObjectCache {
    /// Stores `value` on disk and in memory (write-through): it is on disk when this returns.
    ///
    /// - Parameters:
    ///   - value: The value.
    ///   - key: Its key.
    ///   - expiresAfter: How long it lives; the default is the cache's ``defaultTimeToLive``.
    /// - Throws: ``ObjectCacheError`` with ``ObjectCacheError/Code/encodingFailed`` or
    ///   ``ObjectCacheError/Code/diskFailure``; the previous value then stays.
    @inlinable
    public func set(_ value: Value, forKey key: Key, expiresAfter: Duration? = nil) throws {
        let now = clock()
        let expires = (expiresAfter ?? defaultTimeToLive).map { now.addingTimeInterval($0.timeInterval) }
        // Memory takes the value under the write's stripe: a save of an older unsaved value
        // then sees it and leaves the disk alone. Where other processes write too, one of
        // their changes followed meanwhile may have replaced it on disk: memory keeps nothing.
        let othersChanges = memory.othersChangeCount(if: sharesDirectory)
        let hash = key.hashValue
        let mayNeedTrim = try write(value, forKey: key, created: now, expires: expires, operation: .set) { cost in
            memory.withLock(forHash: hash) { tier in
                tier.statistics.saves += 1
                guard memory.othersChangesUnchanged(since: othersChanges) else {
                    tier.remove(key, hash: hash)
                    return false
                }
                return tier.storeWritten(value, forKey: key, hash: hash, cost: cost, expires: expires, created: now)
            }
        }.result
        if mayNeedTrim { trimMemory(afterHash: hash) }
        publish(.set, key: key)
    }

    /// Writes every unsaved value to disk, as one batch (`set(contentsOf:expiresAfter:)`): in
    /// packed storage a crash leaves all of them saved or none, and with `syncsWrites` the
    /// whole save costs the syncs of one write. Past ``batchLimit`` values, each part of that
    /// many is one batch.
    ///
    /// - Throws: The first failure; values that failed stay unsaved (a value that cannot be
    ///   encoded fails alone, and the others are saved).
    @inlinable
    public func save() throws {
        try persistAll(memory.unsaved, operation: .save)
    }

    /// Stores `value` in memory only, *unsaved* (write-back): `save()` or `save(forKey:)` writes
    /// it to disk. Until then reads see it, and evicting it from memory or clearing memory saves
    /// it first; dropping the cache without `save()` or `close()` loses it, as a crash would.
    /// On a read-only cache it does nothing.
    ///
    /// - Parameters:
    ///   - value: The value.
    ///   - key: Its key.
    ///   - expiresAfter: How long it lives; the default is the cache's ``defaultTimeToLive``.
    /// - Complexity: O(1): no disk access, no encoding.
    @inlinable
    public func setUnsaved(_ value: Value, forKey key: Key, expiresAfter: Duration? = nil) {
        guard !isReadOnly else { return }
        let now = clock()
        let expires = (expiresAfter ?? defaultTimeToLive).map { now.addingTimeInterval($0.timeInterval) }
        let hash = key.hashValue
        memory.withLock(forHash: hash) {
            _ = $0.store(value, forKey: key, hash: hash, isUnsaved: true, cost: 0, expires: expires, created: now)
        }
        trimMemory(afterHash: hash)
        publish(.set, key: key)
    }

    /// Writes the unsaved value of `key`, if there is one, to disk.
    ///
    /// - Throws: ``ObjectCacheError``; the value then stays unsaved.
    public func save(forKey key: Key) throws {
        guard let pending = memory.inspect(for: key, { $0.pendingSave(for: key) }) else { return }
        try persist(pending, operation: .save)
    }

    /// Whether `key` has a value in memory that is not on disk yet.
    public func hasUnsavedValue(forKey key: Key) -> Bool {
        memory.inspect(for: key) { $0.pendingSave(for: key) != nil }
    }
}
