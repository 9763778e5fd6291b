import SwiftyCacheCore

#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif

/// `async` overloads: memory hits return at once; disk I/O runs on the engine's bounded I/O pool,
/// off the caller's thread and off Swift's cooperative pool.
extension ObjectCache {
    /// The value for `key`; see `value(forKey:)`.
    ///
    /// A memory hit returns on the caller's executor without a hop (`nonisolated(nonsending)`,
    /// with Swift 6.2 and later: from the main actor, a hop to the global executor and back
    /// cost a hit 20 µs); only a miss goes to the I/O pool.
    #if compiler(>=6.2)
    @inlinable
    nonisolated(nonsending) public func value(forKey key: Key) async throws -> Value? {
        // Inlinable, as the synchronous read: a memory hit runs specialized for the caller's types.
        if let value = memory.freshHit(key, clock: clock) { return value }
        return try await valueFromDisk(forKey: key)
    }
    #else
    @inlinable
    public func value(forKey key: Key) async throws -> Value? {
        if let value = memory.freshHit(key, clock: clock) { return value }
        return try await valueFromDisk(forKey: key)
    }
    #endif

    /// The rest of an `async` read, after a memory miss: on the caller's task when the value's
    /// record is in the page cache (no thread hop), otherwise on the I/O pool.
    @usableFromInline
    func valueFromDisk(forKey key: Key) async throws -> Value? {
        try Task.checkCancellation()
        switch try valueIfInMemory(forKey: key) {
        case .found(let (value, mustSave)):
            // Unsaved values the memory tier gave up for this one are written on the pool; if the
            // task is cancelled first, they stay in memory, unsaved, for a later trim or save.
            if !mustSave.isEmpty { _ = try? await DiskLRUCache.offload { self.saveAndDrop(mustSave) } }
            return value
        case .missing:
            return nil
        case .needsIO:
            return try await DiskLRUCache.offload { try self.valueAfterMemoryMiss(forKey: key) }
        }
    }

    /// Stores `value` on disk and in memory; see `set(_:forKey:expiresAfter:)`.
    public func set(_ value: Value, forKey key: Key, expiresAfter: Duration? = nil) async throws {
        try await DiskLRUCache.offload { try self.set(value, forKey: key, expiresAfter: expiresAfter) }
    }

    /// Stores several values as one unit; see `set(contentsOf:expiresAfter:)`.
    public func set(
        contentsOf values: some Sequence<(key: Key, value: Value)> & Sendable, expiresAfter: Duration? = nil
    ) async throws {
        try await DiskLRUCache.offload { try self.set(contentsOf: values, expiresAfter: expiresAfter) }
    }

    /// Writes every unsaved value to disk; see `save()`.
    public func save() async throws {
        try await DiskLRUCache.offload { try self.save() }
    }

    /// Writes the unsaved value of `key`; see `save(forKey:)`.
    public func save(forKey key: Key) async throws {
        try await DiskLRUCache.offload { try self.save(forKey: key) }
    }

    /// Removes `key` from memory and disk; see `removeValue(forKey:)`.
    @discardableResult
    public func removeValue(forKey key: Key) async throws -> Bool {
        try await DiskLRUCache.offload { try self.removeValue(forKey: key) }
    }

    /// Whether the cache holds a value for `key`; see `containsValue(forKey:)`.
    public func containsValue(forKey key: Key) async throws -> Bool {
        try await DiskLRUCache.offload { try self.containsValue(forKey: key) }
    }

    /// Reads attachment `index` of the value for `key`; see `attachment(_:forKey:)`.
    public func attachment(_ index: Int, forKey key: Key) async throws -> Data? {
        try await DiskLRUCache.offload { try self.attachment(index, forKey: key) }
    }

    /// The original keys of the values; see `keys()`.
    public func keys() async throws -> [Key] {
        try await DiskLRUCache.offload { self.keys() }
    }

    /// Removes every value from memory and disk; see `removeAll()`.
    public func removeAll() async throws {
        try await DiskLRUCache.offload { try self.removeAll() }
    }

    /// Removes every expired entry; see `removeExpired()`.
    @discardableResult
    public func removeExpired() async throws -> Int {
        try await DiskLRUCache.offload { try self.removeExpired() }
    }

    /// Changes the disk limit; see `setMaxDiskSize(_:)`.
    public func setMaxDiskSize(_ maxDiskSize: Int) async throws {
        try await DiskLRUCache.offload { try self.setMaxDiskSize(maxDiskSize) }
    }

    /// Saves unsaved values and closes the cache; see `close()`.
    public func close() async throws {
        try await DiskLRUCache.offload { try self.close() }
    }

    /// Loads the given keys from disk into memory, several at a time, in the background.
    /// Missing keys, and keys already in memory, are skipped; read errors are ignored (a later
    /// read reports them). When it returns, reads of the keys found are memory hits.
    ///
    /// - Parameter keys: The keys to load.
    public func preload(_ keys: some Sequence<Key> & Sendable) async {
        let wanted = keys.filter { key in !memory.inspect(for: key) { $0.contains(key) } }
        let parallelism = 4
        await withTaskGroup(of: Void.self) { group in
            var iterator = wanted.makeIterator()
            func addNext() -> Bool {
                guard let key = iterator.next() else { return false }
                group.addTask { _ = try? await DiskLRUCache.offload { try self.loadIntoMemory(key) } }
                return true
            }
            for _ in 0..<parallelism where !addNext() { break }
            while await group.next() != nil { _ = addNext() }
        }
    }

    func loadIntoMemory(_ key: Key) throws {
        let othersChanges = memory.othersChangeCount(if: sharesDirectory)
        guard let loaded = try load(key, now: clock()) else { return }
        if memory.storeLoaded(
            loaded.value, forKey: key, cost: loaded.cost, expires: loaded.expires, created: loaded.created,
            othersSince: othersChanges)
        {
            trimMemory(after: key)
        }
    }
}
