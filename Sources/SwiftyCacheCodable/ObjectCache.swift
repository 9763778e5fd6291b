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
/// Each entry is one `DiskLRUCache` entry named by a hash of the key (xxHash in a new cache,
/// SHA-256 in one an earlier release wrote): slot 0 holds an envelope (format, the original
/// key, dates), slot 1 the encoded value, and further slots the raw parts of a
/// ``CacheAttachments`` value. `Data` values are stored as they are.
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
    @usableFromInline package let disk: DiskLRUCache
    /// How values are encoded.
    public let format: ObjectCacheFormat
    /// The time-to-live of entries written without `expiresAfter`; `nil` keeps them until evicted.
    public let defaultTimeToLive: Duration?

    @usableFromInline let memory: MemoryStripes<Key, Value>
    @usableFromInline let clock: @Sendable () -> Date
    /// Names entries by their keys (the package's tests find entries by it).
    @usableFromInline package let keyHasher: any CacheKeyHasher
    let eventHandler: (@Sendable (ObjectCacheEvent<Key>) -> Void)?
    @usableFromInline let attachmentCount: Int
    /// Writers of the same engine key take the same stripe, so concurrent writes of one key
    /// queue up instead of failing with `editInProgress`.
    let writeStripes: [WriteStripe]
    /// The subscribers to ``changes(bufferingKeys:)`` and ``values(forKey:)``.
    let changeHub = ChangeHub<ObjectCacheChange<Key>>()
    /// The keys of engine names, kept while someone observes, for evictions by key.
    let engineNames = LockedState<[String: Key]>([:])

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
    ///   - keyHasher: Maps keys to engine keys. The default, `nil`, is the naming the directory
    ///     records: xxHash (``XXHashKeyHasher``) for a new cache, SHA-256 for one an earlier
    ///     release wrote, so that its entries keep their names.
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
        keyHasher: (any CacheKeyHasher)? = nil,
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
        keyHasher: (any CacheKeyHasher)? = nil,
        diskOptions: DiskLRUCache.Options = DiskLRUCache.Options(),
        eventHandler: (@Sendable (ObjectCacheEvent<Key>) -> Void)? = nil,
        fileSystem: any FileSystem
    ) throws {
        guard memoryLimit >= 0, (memoryByteLimit ?? 0) >= 0 else {
            throw ObjectCacheError.invalidConfiguration("memory limits must not be negative", operation: .open)
        }
        let attachmentCount = (Value.self as? any CacheAttachments.Type)?.attachmentCount ?? 0
        guard attachmentCount >= 0 else {
            throw ObjectCacheError.invalidConfiguration("attachmentCount must not be negative", operation: .open)
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
            throw ObjectCacheError.wrapping(error, key: nil, operation: .open)
        }
        self.format = format
        self.defaultTimeToLive = defaultTimeToLive
        self.memory = MemoryStripes(countLimit: memoryLimit, byteLimit: memoryByteLimit)
        self.clock = clock
        do {
            self.keyHasher =
                try keyHasher ?? KeyNaming.resolve(directory: directory, disk: disk, fileSystem: fileSystem).hasher
        } catch {
            try? disk.close()
            throw error
        }
        self.eventHandler = eventHandler
        self.attachmentCount = attachmentCount
        self.writeStripes = (0..<16).map { _ in WriteStripe() }
        disk.changeHub.install(
            Self.engineTap(
                typed: changeHub, names: engineNames, memory: memory, isReadOnly: diskOptions.readOnly))
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
        let keyBytes = try encodeKey(key, operation: .contains)
        return try diskCall(key, operation: .contains) {
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
        do { try diskCall(nil, operation: .close) { try disk.close() } } catch { failure = failure ?? error }
        changeHub.finish()
        if let failure { throw failure }
    }
}
