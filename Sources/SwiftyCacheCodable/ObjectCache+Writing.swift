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
        let ttl = expiresAfter ?? defaultTimeToLive
        let expires = ttl.map { clock().addingTimeInterval($0.timeInterval) }
        let cost = try write(value, forKey: key, expires: expires, operation: .set)
        let mayNeedTrim = memory.withLock(for: key) { tier in
            tier.statistics.saves += 1
            return tier.storeWritten(value, forKey: key, cost: cost, expires: expires)
        }
        if mayNeedTrim { trimMemory(after: key) }
        publish(.set, key: key)
    }

    /// Writes every unsaved value to disk.
    ///
    /// - Throws: The first failure, after trying every value; values that failed stay unsaved.
    public func save() throws {
        var firstFailure: (any Error)?
        for pending in memory.unsaved {
            do {
                try persist(pending, operation: .save)
            } catch {
                firstFailure = firstFailure ?? error
            }
        }
        if let firstFailure { throw firstFailure }
    }

    /// Writes the unsaved value of `key`, if there is one, to disk.
    ///
    /// - Throws: ``ObjectCacheError``; the value then stays unsaved.
    public func save(_ key: Key) throws {
        guard let pending = memory.inspect(for: key, { $0.pendingSave(for: key) }) else { return }
        try persist(pending, operation: .save)
    }

    /// Whether `key` has a value in memory that is not on disk yet.
    public func hasUnsavedValue(forKey key: Key) -> Bool {
        memory.inspect(for: key) { $0.pendingSave(for: key) != nil }
    }
}
