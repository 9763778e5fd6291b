public import SwiftyCacheCore

#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif

/// A typed, bounded, crash-safe store of `Codable` values: a disk LRU cache with an LRU tier of
/// decoded values in memory in front of it.
///
/// ```swift
/// let pages = try ObjectCache<URL, Page>(directory: dir, maxDiskSize: 50 << 20, memoryLimit: 200)
/// try pages.set(page, forKey: url)          // on disk when it returns
/// let cached = try pages.value(forKey: url) // memory, then disk; nil on a miss
/// pages[url] = draft                        // memory only, unsaved until save()
/// try pages.save()
/// ```
///
/// Each entry is one `DiskLRUCache` entry named by the SHA-256 of the key: slot 0 holds an
/// envelope (format, the original key, dates), slot 1 the encoded value, and further slots the
/// raw parts of a ``CacheAttachments`` value. `Data` values are stored as they are.
///
/// Values written with the subscript stay in memory, *unsaved*, until `save()`; an unsaved
/// value is never dropped silently: evicting or clearing it saves it first. Dropping the cache
/// without saving loses unsaved values, as a crash would.
///
/// All methods are safe from any thread. The memory tier's locks are never held during disk
/// I/O, so a memory hit never waits for another key's read or write, and hits take no lock
/// while nothing is written to memory (they scale with the cores). The memory tier evicts
/// least recently used values first, with a second chance for values read since eviction last
/// passed them. The synchronous methods block on
/// disk I/O; from `async` code use the `async` overloads.
public final class ObjectCache<Key: Hashable & Codable & Sendable, Value: Codable & Sendable>: Sendable {
    /// The engine underneath. The package's tests and benchmarks look at it; users see
    /// ``count``, ``diskSize`` and ``statistics``.
    package let disk: DiskLRUCache
    /// How values are encoded.
    public let format: ObjectCacheFormat
    /// The time-to-live of entries written without `expiresAfter`; `nil` keeps them until evicted.
    public let defaultTimeToLive: Duration?

    @usableFromInline let memory: MemoryStripes<Key, Value>
    @usableFromInline let clock: @Sendable () -> Date
    let keyHasher: any CacheKeyHasher
    let eventHandler: (@Sendable (ObjectCacheEvent<Key>) -> Void)?
    let attachmentCount: Int
    /// Writers of the same engine key take the same stripe, so concurrent writes of one key
    /// queue up instead of failing with `editInProgress`.
    private let writeStripes: [WriteStripe]

    /// Opens (or creates) an object cache in `directory`.
    ///
    /// - Parameters:
    ///   - directory: A directory used by this cache alone.
    ///   - maxDiskSize: The bytes kept on disk. The default is 50 MiB.
    ///   - memoryLimit: The number of decoded values kept in memory. The default is 100.
    ///   - memoryByteLimit: An optional bound on the encoded bytes of the saved values in memory.
    ///   - format: JSON (the default) or a property list.
    ///   - schemaVersion: Your value type's version: bumping it starts with an empty cache.
    ///     The default is 1.
    ///   - defaultTimeToLive: How long entries live unless `set` says otherwise. The default,
    ///     `nil`, is until evicted.
    ///   - clock: The current time, injectable for tests. The default is the system clock.
    ///   - keyHasher: Maps keys to engine keys. The default is SHA-256.
    ///   - diskOptions: Options for the engine, such as `fsync` on commit. Its storage, unless
    ///     set, is packed: each entry one record in a segment file (see
    ///     `DiskLRUCache.Storage`); a directory an earlier release wrote in file storage is
    ///     converted on open, its entries kept.
    ///   - eventHandler: Told about entries the cache dropped on its own (undecodable, expired…).
    /// - Throws: ``ObjectCacheError``: ``ObjectCacheError/Code/invalidConfiguration`` for a bad
    ///   parameter, ``ObjectCacheError/Code/diskFailure`` (the engine's `CacheError` as its
    ///   cause) when the directory cannot be opened: locked by another cache, not a directory,
    ///   an I/O failure.
    public convenience init(
        directory: URL,
        maxDiskSize: Int = 50 << 20,
        memoryLimit: Int = 100,
        memoryByteLimit: Int? = nil,
        format: ObjectCacheFormat = .json,
        schemaVersion: Int = 1,
        defaultTimeToLive: Duration? = nil,
        clock: @escaping @Sendable () -> Date = { Date() },
        keyHasher: any CacheKeyHasher = SHA256KeyHasher(),
        diskOptions: DiskLRUCache.Options = DiskLRUCache.Options(),
        eventHandler: (@Sendable (ObjectCacheEvent<Key>) -> Void)? = nil
    ) throws {
        try self.init(
            directory: directory, maxDiskSize: maxDiskSize, memoryLimit: memoryLimit, memoryByteLimit: memoryByteLimit,
            format: format, schemaVersion: schemaVersion, defaultTimeToLive: defaultTimeToLive, clock: clock,
            keyHasher: keyHasher, diskOptions: diskOptions, eventHandler: eventHandler, fileSystem: SystemFileSystem())
    }

    /// Opens the cache over another file system, for fault injection in tests.
    package init(
        directory: URL,
        maxDiskSize: Int = 50 << 20,
        memoryLimit: Int = 100,
        memoryByteLimit: Int? = nil,
        format: ObjectCacheFormat = .json,
        schemaVersion: Int = 1,
        defaultTimeToLive: Duration? = nil,
        clock: @escaping @Sendable () -> Date = { Date() },
        keyHasher: any CacheKeyHasher = SHA256KeyHasher(),
        diskOptions: DiskLRUCache.Options = DiskLRUCache.Options(),
        eventHandler: (@Sendable (ObjectCacheEvent<Key>) -> Void)? = nil,
        fileSystem: any FileSystem
    ) throws {
        guard memoryLimit >= 0, (memoryByteLimit ?? 0) >= 0 else {
            throw ObjectCacheError.invalidConfiguration("memory limits must not be negative", operation: "open")
        }
        let attachmentCount = (Value.self as? any CacheAttachments.Type)?.attachmentCount ?? 0
        guard attachmentCount >= 0 else {
            throw ObjectCacheError.invalidConfiguration("attachmentCount must not be negative", operation: "open")
        }
        // Packed storage unless the caller chose: an entry's envelope and payload are one
        // record, one write and one read. A directory of an earlier release (file storage) is
        // converted in place, its entries kept (`recoveryReport.migratedFromFileStorage`).
        var options = diskOptions
        if options.storage == nil {
            options.storage = .packed
            options.migratesFileStorage = true
        }
        do {
            self.disk = try DiskLRUCache(
                directory: directory, appVersion: schemaVersion, valueCount: 2 + attachmentCount,
                maxSize: maxDiskSize, options: options, fileSystem: fileSystem)
        } catch {
            throw ObjectCacheError.wrapping(error, key: nil, operation: "open")
        }
        self.format = format
        self.defaultTimeToLive = defaultTimeToLive
        self.memory = MemoryStripes(countLimit: memoryLimit, byteLimit: memoryByteLimit)
        self.clock = clock
        self.keyHasher = keyHasher
        self.eventHandler = eventHandler
        self.attachmentCount = attachmentCount
        self.writeStripes = (0..<16).map { _ in WriteStripe() }
    }

    // MARK: Reading

    /// The value for `key`: from memory, else from disk (which then fills memory); `nil` on a
    /// miss. Expired, undecodable and incompatible entries read as misses and are removed.
    ///
    /// - Throws: ``ObjectCacheError`` for a key that cannot be encoded or a disk failure.
    /// - Complexity: O(1) on a memory hit, with no disk access and no decoding.
    @inlinable
    public func value(forKey key: Key) throws -> Value? {
        // Inlinable, so a memory hit runs specialized for the caller's types.
        if let value = memory.freshHit(key, clock: clock) { return value }
        return try valueAfterMemoryMiss(forKey: key)
    }

    /// The rest of a read: expiry of a value in memory, then the disk.
    @usableFromInline
    func valueAfterMemoryMiss(forKey key: Key) throws -> Value? {
        let now = clock()
        switch memory.find(key, now: now) {
        case .hit(let value):
            return value
        case .expired:
            memory.countMiss(key)
            memory.withLock(for: key) { $0.statistics.expirations += 1 }
            eventHandler?(.expired(key: key))
            if !isReadOnly { try removeFromDisk(key, operation: "value") }
            return nil
        case .miss:
            break
        }
        guard let loaded = try load(key, now: now) else {
            memory.countMiss(key)
            return nil
        }
        memory.countDiskHit(key)
        if memory.storeLoaded(loaded.value, forKey: key, cost: loaded.cost, expires: loaded.expires) {
            trimMemory(after: key)
        }
        return loaded.value
    }

    /// Reads the value for `key`, or `nil`; a write stores it in memory only, unsaved, until
    /// `save()` or `save(_:)` (write-back). Setting `nil` removes the key from memory and
    /// disk. Errors, which a subscript cannot throw, read as `nil` and go to the event handler
    /// where they concern a particular value; use `value(forKey:)` to see them.
    public subscript(key: Key) -> Value? {
        get { try? value(forKey: key) }
        set {
            guard !isReadOnly else { return }
            if let newValue {
                let expires = defaultTimeToLive.map { clock().addingTimeInterval($0.timeInterval) }
                memory.withLock(for: key) {
                    _ = $0.store(newValue, forKey: key, isUnsaved: true, cost: 0, expires: expires)
                }
                trimMemory(after: key)
            } else {
                _ = try? removePermanently(forKey: key)
            }
        }
    }

    /// Reads attachment `index` of the value for `key` straight from its slot, without decoding
    /// the value; `nil` on a miss.
    ///
    /// - Throws: ``ObjectCacheError`` for an index out of range or a disk failure.
    public func attachment(_ index: Int, forKey key: Key) throws -> Data? {
        guard (0..<attachmentCount).contains(index) else {
            throw ObjectCacheError.invalidConfiguration(
                "attachment \(index) is outside 0..<\(attachmentCount)", key: "\(key)", operation: "attachment")
        }
        if let pending = memory.inspect(for: key, { $0.pendingSave(for: key) }),
            let attachable = pending.value as? any CacheAttachments
        {
            return attachable.attachments[index]
        }
        let keyBytes = try encodeKey(key, operation: "attachment")
        return try diskCall(key, operation: "attachment") {
            guard let snapshot = try disk.snapshot(forKey: keyHasher.engineKey(for: keyBytes)) else { return nil }
            defer { snapshot.close() }
            guard let envelope = try? Envelope(decoding: snapshot.readData(at: 0)), envelope.keyBytes == keyBytes,
                !envelope.isExpired(at: clock())
            else { return nil }
            return try snapshot.readData(at: 2 + index)
        }
    }

    /// The original keys of the values on disk, plus unsaved ones in memory (not the hashes).
    /// Entries that cannot be read are left out.
    ///
    /// - Complexity: O(n): it reads every entry's envelope.
    public func keys() -> [Key] {
        var result: [Key] = []
        var seen = Set<Key>()
        let snapshots = (try? disk.snapshots()).map(Array.init) ?? []
        for snapshot in snapshots {
            defer { snapshot.close() }
            guard let envelope = try? Envelope(decoding: snapshot.readData(at: 0)),
                let key = try? KeyCoding.key(Key.self, from: envelope.keyBytes), seen.insert(key).inserted
            else { continue }
            result.append(key)
        }
        for pending in memory.unsaved where seen.insert(pending.key).inserted {
            result.append(pending.key)
        }
        return result
    }

    // MARK: Writing

    /// Stores `value` on disk and in memory (write-through): it is on disk when this returns.
    ///
    /// - Parameters:
    ///   - value: The value.
    ///   - key: Its key.
    ///   - expiresAfter: How long it lives; the default is the cache's ``defaultTimeToLive``.
    /// - Throws: ``ObjectCacheError`` with ``ObjectCacheError/Code/encodingFailed`` or
    ///   ``ObjectCacheError/Code/diskFailure``; the previous value then stays.
    public func set(_ value: Value, forKey key: Key, expiresAfter: Duration? = nil) throws {
        let ttl = expiresAfter ?? defaultTimeToLive
        let expires = ttl.map { clock().addingTimeInterval($0.timeInterval) }
        let cost = try write(value, forKey: key, expires: expires, operation: "set")
        let mayNeedTrim = memory.withLock(for: key) { tier in
            tier.statistics.saves += 1
            return tier.storeWritten(value, forKey: key, cost: cost, expires: expires)
        }
        if mayNeedTrim { trimMemory(after: key) }
    }

    /// Writes every unsaved value to disk.
    ///
    /// - Throws: The first failure, after trying every value; values that failed stay unsaved.
    public func save() throws {
        var firstFailure: (any Error)?
        for pending in memory.unsaved {
            do {
                try persist(pending, operation: "save")
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
        try persist(pending, operation: "save")
    }

    /// Whether `key` has a value in memory that is not on disk yet.
    public func hasUnsavedValue(forKey key: Key) -> Bool {
        memory.inspect(for: key) { $0.pendingSave(for: key) != nil }
    }

    // MARK: Removing

    /// Drops every value from memory, saving unsaved ones first; the disk keeps them. A value
    /// whose save fails stays in memory, still unsaved, and the failure goes to the event handler
    /// (``ObjectCacheEvent/saveFailed(key:error:)``): it is never dropped.
    public func clearMemory() {
        for pending in memory.unsaved {
            do { try persist(pending, operation: "clearMemory") } catch {
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
    /// event handler; call `save(_:)` to see the error.
    public func clearMemory(forKey key: Key) {
        do {
            try save(key)
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
    public func removePermanently(forKey key: Key) throws -> Bool {
        let inMemory = memory.withLock(for: key) { $0.remove(key) } != nil
        let onDisk = try removeFromDisk(key, operation: "removePermanently")
        return inMemory || onDisk
    }

    /// Removes every value from memory and disk.
    ///
    /// - Throws: ``ObjectCacheError`` for a disk failure.
    public func removeAll() throws {
        memory.updateEach { $0.removeAll() }
        try diskCall(nil, operation: "removeAll") { try disk.evictAll() }
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
        let snapshots = try diskCall(nil, operation: "removeExpired") { try disk.snapshots() }
        for snapshot in snapshots {
            let envelope = try? Envelope(decoding: snapshot.readData(at: 0))
            snapshot.close()
            guard let envelope, envelope.isExpired(at: now) else { continue }
            if try diskCall(nil, operation: "removeExpired", { try disk.remove(snapshot.key) }) {
                removed += 1
                if let key = try? KeyCoding.key(Key.self, from: envelope.keyBytes) { eventHandler?(.expired(key: key)) }
            }
        }
        memory.count { $0.expirations += removed }
        return removed
    }

    // MARK: State

    /// Counters since the cache was opened.
    public var statistics: ObjectCacheStatistics { memory.statistics }

    /// The number of values in memory.
    public var memoryCount: Int { memory.count }

    /// The bytes the entries take on disk (values, envelopes and attachments).
    public var diskSize: Int { disk.size }

    /// The number of values the cache holds: the entries on disk, plus unsaved values in
    /// memory whose key is not on disk yet. Expired entries count until they are removed.
    ///
    /// - Complexity: O(unsaved values): each is hashed and looked up on disk.
    public var count: Int {
        let unsaved = memory.unsaved
        var total = disk.count
        for pending in unsaved {
            guard let keyBytes = try? KeyCoding.bytes(of: pending.key),
                (try? disk.contains(keyHasher.engineKey(for: keyBytes))) != true
            else { continue }
            total += 1
        }
        return total
    }

    /// Whether the cache holds no value, on disk or unsaved in memory.
    public var isEmpty: Bool { count == 0 }

    /// Whether the cache holds a value for `key` that has not expired, in memory or on disk.
    /// It does not count as a read and does not decode the value.
    ///
    /// - Throws: ``ObjectCacheError`` for a key that cannot be encoded or a disk failure.
    /// - Complexity: O(1) for a value in memory; otherwise one read of the entry's envelope.
    public func contains(_ key: Key) throws -> Bool {
        let now = clock()
        switch memory.inspect(for: key, { $0.peek(key, now: now) }) {
        case .hit: return true
        case .expired: return false
        case .miss: break
        }
        let keyBytes = try encodeKey(key, operation: "contains")
        return try diskCall(key, operation: "contains") {
            guard let snapshot = try disk.peekSnapshot(forKey: keyHasher.engineKey(for: keyBytes)) else {
                return false
            }
            defer { snapshot.close() }
            guard let envelope = try? Envelope(decoding: snapshot.readData(at: 0)) else { return false }
            return envelope.keyBytes == keyBytes && !envelope.isExpired(at: now)
        }
    }

    /// Saves unsaved values, then closes the disk cache. Later calls throw.
    ///
    /// - Throws: ``ObjectCacheError``: a save failure (the cache is closed regardless) or a
    ///   close failure.
    public func close() throws {
        var failure: (any Error)?
        do { try save() } catch { failure = error }
        memory.updateEach { $0.removeAll() }
        do { try diskCall(nil, operation: "close") { try disk.close() } } catch { failure = failure ?? error }
        if let failure { throw failure }
    }

    // MARK: Internals

    struct Loaded {
        var value: Value
        var cost: Int
        var expires: Date?
    }

    /// Reads and decodes the entry for `key` from disk; `nil` for a miss of any kind.
    func load(_ key: Key, now: Date) throws -> Loaded? {
        let keyBytes = try encodeKey(key, operation: "value")
        let engineKey = keyHasher.engineKey(for: keyBytes)
        // One engine call reads every slot: one lock and no snapshot object. An expired or
        // colliding entry costs its payload's read too; both are rare.
        guard let slots = try diskCall(key, operation: "value", { try disk.data(forKey: engineKey) }) else {
            return nil
        }
        switch decode(slots, keyBytes: keyBytes, now: now) {
        case .loaded(let loaded):
            return loaded
        case .collision:
            // Another key hashed to the same name: its entry stays, this key misses.
            eventHandler?(.hashCollision(key: key))
            return nil
        case .incompatible:
            eventHandler?(.incompatibleEntry(key: key))
        case .expired:
            memory.withLock(for: key) { $0.statistics.expirations += 1 }
            eventHandler?(.expired(key: key))
        case .undecodable(let error):
            memory.withLock(for: key) { $0.statistics.decodeFailures += 1 }
            eventHandler?(.decodingFailed(key: key, error: error))
        }
        try dropFromDisk(engineKey, key: key)
        return nil
    }

    /// What the slots of an entry hold for `key`.
    enum Decoded {
        case loaded(Loaded)
        /// Another key's entry under the same hashed name.
        case collision
        /// Another format, or no envelope.
        case incompatible
        case expired
        case undecodable(any Error)
    }

    /// Decodes an entry's slots, without side effects: the caller counts, reports and drops.
    func decode(_ slots: [Data], keyBytes: Data, now: Date) -> Decoded {
        guard let envelope = try? Envelope(decoding: slots[0]),
            envelope.codec == format.codec || envelope.codec == .raw
        else { return .incompatible }
        guard envelope.keyBytes == keyBytes else { return .collision }
        if envelope.isExpired(at: now) { return .expired }
        let payload = slots[1]
        do {
            var value = try decodeValue(payload, codec: envelope.codec)
            if attachmentCount > 0, var attachable = value as? any CacheAttachments {
                attachable.restoreAttachments(Array(slots[2...]))
                if let restored = attachable as? Value { value = restored }
            }
            return .loaded(Loaded(value: value, cost: payload.count, expires: envelope.expires))
        } catch {
            return .undecodable(error)
        }
    }

    /// What a read from memory only found (see ``valueIfInMemory(forKey:)``).
    enum MemoryOnlyRead {
        /// The read is done: the value, or `nil` on a miss; `mustSave` holds the unsaved
        /// values the memory tier gave up to make room, for the caller to write.
        case finished(Value?, mustSave: [MemoryTier<Key, Value>.PendingSave])
        /// It needs file I/O (the disk, or a write to drop an unusable entry).
        case needsIO
    }

    /// `value(forKey:)` without waiting for file I/O, for the `async` overload on Swift's
    /// cooperative pool: a memory hit, or a packed entry whose record is in the page cache
    /// (see `DiskLRUCache.dataIfInMemory(forKey:)`), decoded here. Anything that needs the
    /// disk or a write returns ``MemoryOnlyRead/needsIO`` before any effect.
    func valueIfInMemory(forKey key: Key) throws -> MemoryOnlyRead {
        let now = clock()
        switch memory.find(key, now: now) {
        case .hit(let value): return .finished(value, mustSave: [])
        case .expired: return .needsIO
        case .miss: break
        }
        let keyBytes = try encodeKey(key, operation: "value")
        let engineKey = keyHasher.engineKey(for: keyBytes)
        let read = try diskCall(key, operation: "value") { try disk.dataIfInMemory(forKey: engineKey) }
        guard case .finished(let slots) = read else { return .needsIO }
        guard let slots else {
            memory.countMiss(key)
            return .finished(nil, mustSave: [])
        }
        guard case .loaded(let loaded) = decode(slots, keyBytes: keyBytes, now: now) else {
            return .needsIO
        }
        memory.countDiskHit(key)
        let stored = memory.storeLoaded(loaded.value, forKey: key, cost: loaded.cost, expires: loaded.expires)
        return .finished(loaded.value, mustSave: stored ? memory.trim(after: key) : [])
    }

    private func decodeValue(_ payload: Data, codec: ObjectCacheFormat.Codec) throws -> Value {
        if codec == .raw {
            guard let data = payload as? Value else {
                throw DecodingError.typeMismatch(
                    Value.self, .init(codingPath: [], debugDescription: "raw bytes stored, \(Value.self) expected"))
            }
            return data
        }
        return try format.decode(Value.self, from: payload)
    }

    /// Encodes and writes one value; returns its encoded size. The caller counts the save.
    func write(_ value: Value, forKey key: Key, expires: Date?, operation: String) throws -> Int {
        let keyBytes = try encodeKey(key, operation: operation)
        let payload: Data
        let codec: ObjectCacheFormat.Codec
        if let data = value as? Data {
            payload = data
            codec = .raw
        } else {
            do {
                payload = try format.encode(value)
            } catch {
                throw ObjectCacheError.encodingFailed("value", key: "\(key)", operation: operation, cause: error)
            }
            codec = format.codec
        }
        var slots = [Envelope(codec: codec, created: clock(), expires: expires, keyBytes: keyBytes).encoded(), payload]
        if attachmentCount > 0 {
            let parts = (value as? any CacheAttachments)?.attachments ?? []
            guard parts.count == attachmentCount else {
                throw ObjectCacheError.attachmentCountMismatch(
                    expected: attachmentCount, got: parts.count, key: "\(key)", operation: operation)
            }
            slots += parts
        }
        let engineKey = keyHasher.engineKey(for: keyBytes)
        try stripe(for: engineKey).lock.withLock { writes in
            try diskCall(key, operation: operation) { try disk.setData(slots, forKey: engineKey) }
            writes += 1
        }
        return payload.count
    }

    /// Writes an unsaved value and marks it saved, unless a newer write replaced it meanwhile.
    func persist(_ pending: MemoryTier<Key, Value>.PendingSave, operation: String) throws {
        let cost = try write(pending.value, forKey: pending.key, expires: pending.expires, operation: operation)
        memory.withLock(for: pending.key) {
            $0.statistics.saves += 1
            $0.markSaved(pending.key, version: pending.version, cost: cost)
        }
    }

    /// Applies the memory limits after a store of `key`, saving unsaved values before
    /// dropping them.
    func trimMemory(after key: Key) {
        saveAndDrop(memory.trim(after: key))
    }

    /// Writes the unsaved values the memory tier gave up, then drops them from memory; a value
    /// that cannot be written stays there, unsaved.
    func saveAndDrop(_ mustSave: [MemoryTier<Key, Value>.PendingSave]) {
        for pending in mustSave {
            do {
                try persist(pending, operation: "evict from memory")
                memory.withLock(for: pending.key) { tier in
                    if tier.removeIfSaved(pending.key) { tier.statistics.memoryEvictions += 1 }
                }
            } catch {
                // Kept in memory, still unsaved: never dropped silently.
                eventHandler?(.saveFailed(key: pending.key, error: error))
            }
        }
    }

    /// Removes an entry a read found unusable (expired, undecodable, another format); a
    /// read-only cache leaves it, and the read is a miss all the same.
    private func dropFromDisk(_ engineKey: String, key: Key) throws {
        guard !isReadOnly else { return }
        try diskCall(key, operation: "value") { _ = try disk.remove(engineKey) }
    }

    /// The keys that lowering the disk limit to `maxDiskSize` would evict, least recently used
    /// first, without evicting anything or changing the LRU order.
    ///
    /// - Complexity: O(n): it walks the entries on disk and reads each one's envelope.
    public func keysEvicted(atLimit maxDiskSize: Int) -> [Key] {
        var excess = disk.size - maxDiskSize
        guard excess > 0 else { return [] }
        var result: [Key] = []
        let snapshots = (try? disk.snapshots()).map(Array.init) ?? []
        for snapshot in snapshots where excess > 0 {
            defer { snapshot.close() }
            excess -= snapshot.lengths.reduce(0, +)
            if let envelope = try? Envelope(decoding: snapshot.readData(at: 0)),
                let key = try? KeyCoding.key(Key.self, from: envelope.keyBytes)
            {
                result.append(key)
            }
        }
        return result
    }

    /// Changes the disk limit; a lower one evicts least recently used entries at once.
    ///
    /// - Throws: ``ObjectCacheError`` for a limit below 1, a read-only cache, or a disk failure.
    public func setMaxDiskSize(_ maxDiskSize: Int) throws {
        try diskCall(nil, operation: "setMaxDiskSize") {
            try disk.setMaxSize(maxDiskSize)
            try disk.flush()
        }
    }

    /// The disk limit in bytes.
    public var maxDiskSize: Int { disk.maxSize }

    /// What opening the disk cache found and repaired: a journal it had to reset, files it did
    /// not create and left alone.
    public var recoveryReport: RecoveryReport { disk.recoveryReport }

    /// Whether the cache was opened with `DiskLRUCache.Options(readOnly: true)`: reads work,
    /// every write throws (the subscript's setter does nothing).
    public var isReadOnly: Bool { disk.options.readOnly }

    @discardableResult
    func removeFromDisk(_ key: Key, operation: String) throws -> Bool {
        let engineKey = keyHasher.engineKey(for: try encodeKey(key, operation: operation))
        return try stripe(for: engineKey).lock.withLock { writes in
            writes += 1
            return try diskCall(key, operation: operation) { try disk.remove(engineKey) }
        }
    }

    func encodeKey(_ key: Key, operation: String) throws -> Data {
        do {
            return try KeyCoding.bytes(of: key)
        } catch {
            throw ObjectCacheError.encodingFailed("key", key: "\(key)", operation: operation, cause: error)
        }
    }

    /// Runs an engine call, wrapping its error with the key and operation.
    func diskCall<T>(_ key: Key?, operation: String, _ body: () throws -> T) throws(ObjectCacheError) -> T {
        do {
            return try body()
        } catch {
            throw ObjectCacheError.wrapping(error, key: key.map { "\($0)" }, operation: operation)
        }
    }

    private func stripe(for engineKey: String) -> WriteStripe {
        var hasher = Hasher()
        hasher.combine(engineKey)
        return writeStripes[Int(UInt(bitPattern: hasher.finalize()) % UInt(writeStripes.count))]
    }
}

/// One lock of the per-key write striping; its state counts the writes it serialized (a
/// zero-size state would confuse ThreadSanitizer's access tracking).
final class WriteStripe: Sendable {
    let lock = LockedState(0)
}

extension Duration {
    /// The duration in seconds, as Foundation counts time.
    var timeInterval: TimeInterval {
        let (seconds, attoseconds) = components
        return TimeInterval(seconds) + TimeInterval(attoseconds) / 1e18
    }
}
