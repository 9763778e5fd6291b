import SwiftyCacheCore

/// Pinned values: kept on disk whatever the size limit, within a ceiling of their own.
extension ObjectCache {
    /// Pins the value of `key` on disk: eviction by size passes it by until `unpin(_:)`,
    /// through writes of the key, reopening, crashes and compaction (see
    /// `DiskLRUCache.pin(_:)`). An unsaved value is saved first. Removing the value removes
    /// its pin.
    ///
    /// - Returns: Whether there is a value to pin.
    /// - Throws: ``ObjectCacheError`` with the engine's `CacheError` as its cause: `pinLimitExceeded`
    ///   when the pinned values would pass ``ObjectCacheConfiguration/maxPinnedDiskSize``
    ///   (nothing pinned), a read-only cache, a disk failure.
    @discardableResult
    public func pin(_ key: Key) throws -> Bool {
        try save(forKey: key)
        let engineKey = keyHasher.engineKey(for: try encodeKey(key, operation: .pin))
        return try diskCall(key, operation: .pin) { try disk.pin(engineKey) }
    }

    /// Unpins `key`: its value is evicted as any other from now on.
    ///
    /// - Returns: Whether it was pinned.
    @discardableResult
    public func unpin(_ key: Key) throws -> Bool {
        let engineKey = keyHasher.engineKey(for: try encodeKey(key, operation: .unpin))
        return try diskCall(key, operation: .unpin) { try disk.unpin(engineKey) }
    }

    /// Whether the value of `key` is pinned.
    public func isPinned(_ key: Key) throws -> Bool {
        let engineKey = keyHasher.engineKey(for: try encodeKey(key, operation: .pin))
        return try diskCall(key, operation: .pin) { try disk.isPinned(engineKey) }
    }

    /// The bytes the pinned values take on disk.
    public var pinnedDiskSize: Int { disk.pinnedSize }

    /// The most pinned values may take on disk: ``ObjectCacheConfiguration/maxPinnedDiskSize``
    /// if set, else half of what the entries may take of ``ObjectCacheConfiguration/maxDiskSize``.
    public var maxPinnedDiskSize: Int { disk.maxPinnedSize }

    /// Pins the value of `key`; see `pin(_:)`.
    @discardableResult
    public func pin(_ key: Key) async throws -> Bool {
        try await DiskLRUCache.offload { try self.pin(key) }
    }

    /// Unpins `key`; see `unpin(_:)`.
    @discardableResult
    public func unpin(_ key: Key) async throws -> Bool {
        try await DiskLRUCache.offload { try self.unpin(key) }
    }
}
