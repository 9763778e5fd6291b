import SwiftyCacheCore

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

extension ObjectCache {
    /// Drops every value from memory, saving unsaved ones first; the disk keeps them. A value
    /// whose save fails stays in memory, still unsaved, and the failure goes to the event handler
    /// (``ObjectCacheEvent/saveFailed(key:error:)``): it is never dropped.
    public func clearMemory() {
        for pending in memory.unsaved {
            do { try persist(pending, operation: .clearMemory) } catch {
                eventHandler?(.saveFailed(key: pending.key, error: error))
            }
        }
        memory.updateEach { tier in
            for key in tier.items.indicesInLRUOrder.compactMap({ tier.items.key(at: $0) }) {
                _ = tier.removeIfSaved(key)
            }
        }
    }

    /// Drops the value of `key` from memory, saving it first if it is unsaved; the disk keeps
    /// it. If the save fails, the value stays in memory, unsaved, and the failure goes to the
    /// event handler; call `save(forKey:)` to see the error.
    public func clearMemory(forKey key: Key) {
        do {
            try save(forKey: key)
        } catch {
            eventHandler?(.saveFailed(key: key, error: error))
            return
        }
        _ = memory.withLock(for: key) { $0.removeIfSaved(key) }
    }

    /// Removes `key` from memory and disk.
    ///
    /// - Returns: Whether a value was found in either.
    /// - Throws: ``ObjectCacheError`` for a disk failure.
    @discardableResult
    public func removeValue(forKey key: Key) throws -> Bool {
        let inMemory = memory.withLock(for: key) { $0.remove(key) } != nil
        let onDisk = try removeFromDisk(key, operation: .removeValue)
        if inMemory || onDisk { publish(.removed, key: key) }
        return inMemory || onDisk
    }

    /// Removes every value from memory and disk.
    ///
    /// - Throws: ``ObjectCacheError`` for a disk failure.
    public func removeAll() throws {
        memory.updateEach { $0.removeAll() }
        defer { publish(.cleared, key: nil) }
        try diskCall(nil, operation: .removeAll) { try disk.evictAll() }
    }

    /// Removes every expired entry from memory and disk.
    ///
    /// - Returns: How many entries were removed from disk.
    /// - Complexity: O(n): it reads every entry's envelope.
    @discardableResult
    public func removeExpired() throws -> Int {
        let now = clock()
        memory.updateEach { tier in
            for index in tier.items.indicesInLRUOrder {
                if let item = tier.items.value(at: index), let expires = item.expires, expires <= now,
                    let key = tier.items.key(at: index)
                {
                    tier.remove(key)
                }
            }
        }
        var removed = 0
        let snapshots = try diskCall(nil, operation: .removeExpired) { try disk.snapshots() }
        for snapshot in snapshots {
            let envelope = try? Envelope(decoding: snapshot.readData(at: 0))
            snapshot.close()
            guard let envelope, envelope.isExpired(at: now) else { continue }
            if try diskCall(nil, operation: .removeExpired, { try disk.removeValue(forKey: snapshot.key) }) {
                removed += 1
                if let key = try? KeyCoding.key(Key.self, from: envelope.keyBytes) {
                    eventHandler?(.expired(key: key))
                    publish(.expired, key: key)
                }
            }
        }
        memory.count { $0.expirations += removed }
        return removed
    }
}

extension ObjectCache {
    /// Drops the value of `key` that a layer above could not turn into its own type (the
    /// archived objects of `SwiftyCacheSecureCoding`): counted in
    /// ``ObjectCacheStatistics/decodeFailures``, told to the event handler, dropped from memory
    /// and, unless the cache is read-only, from disk. The read is a miss.
    package func dropUndecodable(_ key: Key, error: any Error) {
        memory.withLock(for: key) { tier in
            tier.statistics.decodeFailures += 1
            _ = tier.remove(key)
        }
        eventHandler?(.decodingFailed(key: key, error: error))
        if !isReadOnly, (try? removeFromDisk(key, operation: .value)) == true { publish(.removed, key: key) }
    }
}
