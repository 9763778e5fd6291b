/// Pinned entries: kept whatever the size limit, within a ceiling of their own.
extension DiskLRUCache {
    /// Pins the entry of `key`: eviction by size passes it by until ``unpin(_:)``. The pin
    /// belongs to the key: it holds through writes of the key, reopening, crashes and
    /// compaction, and goes when the entry is removed (`removeValue(forKey:)`, `evictAll()`).
    ///
    /// Pinned entries count in ``size`` as any other; their bytes may not pass
    /// ``Options/maxPinnedSize`` (half of ``maxSize`` unless set), so that the others always
    /// have room. A write that makes a pinned entry larger is not refused; the next pin is,
    /// while the pinned bytes are past the ceiling.
    ///
    /// The pinned keys are kept in `journal.pins`, replaced durably before this returns. The
    /// Java `DiskLruCache` and earlier releases ignore that file: they evict pinned entries as
    /// any other.
    ///
    /// - Returns: Whether the cache has an entry for `key` (and it is now pinned).
    /// - Throws: ``CacheError/Code/pinLimitExceeded`` (nothing pinned),
    ///   ``CacheError/Code/readOnly``, ``CacheError/Code/invalidKey``, ``CacheError/Code/cacheClosed``,
    ///   ``CacheError/Code/ioFailure`` when `journal.pins` cannot be written (the entry is then
    ///   pinned in this session, and written with the next change of the pins).
    /// - Complexity: O(pinned entries), to add up their bytes and write their keys.
    @discardableResult
    public func pin(_ key: String) throws -> Bool {
        try validateForReading(key, operation: .pin)
        guard
            let change = try locked(
                operation: .pin, key: key, { state in try state.pin(key: key).map { try state.writePinsIfShared($0) } })
        else { return false }
        if let change { try writePins(change) }
        return true
    }

    /// Unpins `key`: its entry, if any, is evicted as any other from now on, and is the
    /// newest in LRU order.
    ///
    /// - Returns: Whether `key` was pinned.
    /// - Throws: ``CacheError/Code/readOnly``, ``CacheError/Code/invalidKey``,
    ///   ``CacheError/Code/cacheClosed``, ``CacheError/Code/ioFailure`` as for ``pin(_:)``.
    @discardableResult
    public func unpin(_ key: String) throws -> Bool {
        try validateForReading(key, operation: .unpin)
        let (wasPinned, change) = try locked(operation: .unpin, key: key) { state in
            let wasPinned = state.pins.contains(key)
            return (wasPinned, try state.writePinsIfShared(try state.unpin(key: key)))
        }
        if let change { try writePins(change) }
        return wasPinned
    }

    /// Whether the entry of `key` is pinned.
    public func isPinned(_ key: String) throws -> Bool {
        try locked(operation: .contains, key: key, access: .reads) { state in
            state.followOthersPins()
            return state.pins.contains(key)
        }
    }

    /// The pinned keys, sorted.
    public func pinnedKeys() throws -> [String] {
        try locked(operation: .keys, access: .reads) { state in
            state.followOthersPins()
            return state.pins.sorted()
        }
    }

    /// The committed bytes of the pinned entries.
    ///
    /// - Complexity: O(pinned entries).
    public var pinnedSize: Int { state.withLock { $0.pinnedSize } }

    /// The most pinned entries may take: ``Options/maxPinnedSize`` if set, else half of what
    /// the entries may take (half of `maxSize`, or of the entries' share of it with
    /// ``Options/maxSizeBoundsDirectory``).
    public var maxPinnedSize: Int { state.withLock { $0.pinLimit } }

    /// Writes a set of pinned keys taken under the lock, unless a newer set was written
    /// meanwhile. On failure of a write a caller asked for (`retriesOnFailure`), the set is
    /// marked unwritten, for the next lock hold to retry once.
    func writePins(_ change: (generation: UInt64, keys: [String]), retriesOnFailure: Bool = true) throws(CacheError) {
        try pinsWriter.withLock { (written: inout UInt64) throws(CacheError) in
            guard change.generation > written else { return }
            do {
                try cacheDirectory.writePins(change.keys)
            } catch {
                // Under the state lock alone (not `withState`, which would write pins again).
                if retriesOnFailure { state.withLock { $0.pinsDurableGeneration = .max } }
                throw CacheError.ioFailure(error, operation: .pin, path: cacheDirectory.pinsPath)
            }
            written = change.generation
        }
    }
}
