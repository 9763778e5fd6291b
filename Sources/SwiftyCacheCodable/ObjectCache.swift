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
/// let pages = try ObjectCache<URL, Page>(directory: dir, configuration: .init(memoryLimit: 200))
/// try pages.set(page, forKey: url)          // on disk when it returns
/// let cached = try pages.value(forKey: url) // memory, then disk; nil on a miss
/// pages.setUnsaved(draft, forKey: url)      // memory only, until save()
/// try pages.save()
/// ```
///
/// Each entry is one `DiskLRUCache` entry named by a hash of the key (xxHash in a new cache,
/// SHA-256 in one an earlier release wrote): slot 0 holds an envelope (format, the original
/// key, dates), slot 1 the encoded value, and further slots the raw parts of a
/// ``CacheAttachments`` value. `Data` values are stored as they are.
///
/// Values written with ``setUnsaved(_:forKey:expiresAfter:)`` stay in memory, *unsaved*, until
/// `save()`; an unsaved value is never dropped silently: evicting or clearing it saves it first.
/// Dropping the cache without saving loses unsaved values, as a crash would.
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
    @usableFromInline let eventHandler: (@Sendable (ObjectCacheEvent<Key>) -> Void)?
    @usableFromInline let attachmentCount: Int
    /// Writers of the same engine key take the same stripe, so concurrent writes of one key
    /// queue up instead of failing with `editInProgress`. Sixty-four of them: a writer holds
    /// its stripe while its durable commit waits for the group it joined, so writers of other
    /// keys on the same stripe miss that group (four writers over sixteen stripes collided a
    /// third of the time; `--workload durability`, four threads, 2.0× one thread's throughput
    /// with sixteen, 2.3–2.5× with sixty-four).
    @usableFromInline let writeStripes: [WriteStripe]
    /// The schema version values are written in (the configuration's).
    @usableFromInline let schemaVersion: Int
    /// The schema version of entries whose envelope records none (see ``SchemaRecord``).
    @usableFromInline let unversionedSchema: Int
    /// The conversions from earlier schema versions, by version.
    let migrations: [Int: SchemaMigration<Value>]
    /// The fetches of ``value(forKey:maxAge:options:fetch:)`` in flight, one per key.
    package let flights = SingleFlight<Key, Value>()
    /// The subscribers to ``changes(bufferingKeys:)`` and ``values(forKey:)``.
    let changeHub = ChangeHub<ObjectCacheChange<Key>>()
    /// The keys of engine names, kept while someone observes, for evictions by key.
    let engineNames = LockedState<[String: Key]>([:])
    /// Whether the configuration asked for a protection class: `EPERM` then means the files
    /// are locked away (``ObjectCacheError/Code/unavailable``).
    @usableFromInline let protectsFiles: Bool
    /// The keys a clean close records for the next open's warm start.
    let warmStartCount: Int
    /// The warm start's background load, while it runs.
    let warmStart = LockedState<Task<Void, Never>?>(nil)
    /// Whether the cache joined ``MemoryPressureRelay/shared``.
    let followsMemoryPressure: Bool
    /// Whether other processes write the directory too (``ObjectCacheConfiguration/sharing``):
    /// memory then drops what they change, and keeps nothing read or written across one of
    /// their changes.
    @usableFromInline let sharesDirectory: Bool

    /// Opens (or creates) an object cache in `directory`.
    ///
    /// ```swift
    /// let pages = try ObjectCache<URL, Page>(directory: dir, configuration: .init(memoryLimit: 200))
    /// ```
    ///
    /// - Parameters:
    ///   - directory: A directory used by this cache alone.
    ///   - configuration: Limits, format, storage, schema version and expiry; the default
    ///     suits most caches (see ``ObjectCacheConfiguration``).
    ///   - migrations: How to read values earlier schema versions wrote (see
    ///     ``SchemaMigration``); with none, a cache written in another version opens empty.
    ///   - eventHandler: Told about entries the cache dropped on its own (undecodable, expired…).
    /// - Throws: ``ObjectCacheError``: ``ObjectCacheError/Code/invalidConfiguration`` for a bad
    ///   setting (two migrations from one version, one from the current version),
    ///   ``ObjectCacheError/Code/diskFailure`` (the engine's `CacheError` as its cause) when the
    ///   directory cannot be opened: locked by another cache, not a directory, opened with the
    ///   other storage, an I/O failure.
    public convenience init(
        directory: URL,
        configuration: ObjectCacheConfiguration = ObjectCacheConfiguration(),
        migrations: [SchemaMigration<Value>] = [],
        eventHandler: (@Sendable (ObjectCacheEvent<Key>) -> Void)? = nil
    ) throws {
        try self.init(
            directory: directory, configuration: configuration, migrations: migrations,
            diskOptions: configuration.diskOptions, eventHandler: eventHandler, fileSystem: SystemFileSystem())
    }

    /// Opens the cache over another file system, for fault injection in tests.
    package convenience init(
        directory: URL,
        configuration: ObjectCacheConfiguration = ObjectCacheConfiguration(),
        migrations: [SchemaMigration<Value>] = [],
        eventHandler: (@Sendable (ObjectCacheEvent<Key>) -> Void)? = nil,
        fileSystem: any FileSystem
    ) throws {
        try self.init(
            directory: directory, configuration: configuration, migrations: migrations,
            diskOptions: configuration.diskOptions, eventHandler: eventHandler, fileSystem: fileSystem)
    }

    /// Opens the cache with `configuration`, over `diskOptions` (the configuration's, or the
    /// deprecated initializer's).
    init(
        directory: URL,
        configuration: ObjectCacheConfiguration,
        migrations: [SchemaMigration<Value>] = [],
        diskOptions options: DiskLRUCache.Options,
        eventHandler: (@Sendable (ObjectCacheEvent<Key>) -> Void)?,
        fileSystem: any FileSystem
    ) throws {
        let memoryLimit = configuration.memoryLimit
        let memoryByteLimit = configuration.memoryByteLimit
        guard memoryLimit >= 0, (memoryByteLimit ?? 0) >= 0 else {
            throw ObjectCacheError.invalidConfiguration("memory limits must not be negative", operation: .open)
        }
        let attachmentCount = (Value.self as? any CacheAttachments.Type)?.attachmentCount ?? 0
        guard attachmentCount >= 0 else {
            throw ObjectCacheError.invalidConfiguration("attachmentCount must not be negative", operation: .open)
        }
        let migrationsByVersion = try Self.index(migrations, current: configuration.schemaVersion)
        // A directory last opened with a version this cache migrates from opens with that
        // version (any other would empty it), then takes the current one.
        var openVersion = configuration.schemaVersion
        if !migrations.isEmpty, let recorded = DiskLRUCache.recordedAppVersion(in: directory, fileSystem: fileSystem),
            migrationsByVersion[recorded] != nil
        {
            openVersion = recorded
        }
        let protectsFiles = configuration.fileProtection.map { $0 != .none } ?? false
        func reported(_ error: any Error) -> ObjectCacheError {
            let wrapped = ObjectCacheError.wrapping(error, key: nil, operation: .open)
            return protectsFiles && wrapped.isPermissionDenied ? .unavailable(wrapped) : wrapped
        }
        do {
            if let storageClass = configuration.storageClass {
                try StorageClassRecord.check(storageClass, in: directory, fileSystem: fileSystem)
            }
            self.disk = try DiskLRUCache(
                directory: directory, appVersion: openVersion, valueCount: 2 + attachmentCount,
                maxSize: configuration.maxDiskSize, options: options, fileSystem: fileSystem)
        } catch {
            throw reported(error)
        }
        do {
            try Self.settle(
                directory, configuration: configuration, isReadOnly: options.isReadOnly, fileSystem: fileSystem)
        } catch {
            try? disk.close()
            throw reported(error)
        }
        self.protectsFiles = protectsFiles
        self.warmStartCount = max(0, configuration.warmStartCount)
        self.followsMemoryPressure = configuration.trimsMemoryUnderPressure && memoryLimit > 0
        self.schemaVersion = configuration.schemaVersion
        self.migrations = migrationsByVersion
        do {
            self.unversionedSchema = try Self.adoptSchemaVersion(
                configuration.schemaVersion, openedWith: openVersion, disk: disk, directory: directory,
                fileSystem: fileSystem)
        } catch {
            try? disk.close()
            throw reported(error)
        }
        self.format = configuration.format
        self.defaultTimeToLive = configuration.defaultTimeToLive
        self.memory = MemoryStripes(countLimit: memoryLimit, byteLimit: memoryByteLimit)
        self.clock = configuration.clock
        do {
            self.keyHasher =
                try configuration.keyHasher
                ?? KeyNaming.resolve(directory: directory, disk: disk, fileSystem: fileSystem).hasher
        } catch {
            try? disk.close()
            throw reported(error)
        }
        self.eventHandler = eventHandler
        self.attachmentCount = attachmentCount
        self.writeStripes = (0..<64).map { _ in WriteStripe() }
        self.sharesDirectory = options.sharing == .processes
        disk.changeHub.install(
            Self.engineTap(
                typed: changeHub, names: engineNames, memory: memory, isReadOnly: options.isReadOnly,
                sharesDirectory: sharesDirectory,
                firstValue: { [weak disk] name in try? disk?.peekSnapshot(forKey: name)?.readData(at: 0) }))
        // The other processes' changes reach memory as they journal them, not only at this
        // process's next disk access.
        if sharesDirectory { disk.followWriter() }
        if followsMemoryPressure { MemoryPressureRelay.shared.add(self) }
        startWarmStart()
    }

    /// Records the storage class a new directory was created with, and applies the
    /// platform's attributes (backup exclusion, protection class), once the engine has opened
    /// (and created) the directory.
    private static func settle(
        _ directory: URL, configuration: ObjectCacheConfiguration, isReadOnly: Bool, fileSystem: any FileSystem
    ) throws {
        guard !isReadOnly else { return }
        if let storageClass = configuration.storageClass {
            try StorageClassRecord.adopt(storageClass, in: directory, fileSystem: fileSystem)
        }
        let excluded = configuration.isExcludedFromBackup ?? (configuration.storageClass == .durable ? true : nil)
        try PlatformFileAttributes.apply(
            to: directory, excludedFromBackup: excluded, protection: configuration.fileProtection)
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
                (try? disk.containsValue(forKey: keyHasher.engineKey(for: keyBytes))) != true
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
    public func containsValue(forKey key: Key) throws -> Bool {
        let now = clock()
        switch memory.inspect(for: key, { $0.peek(key, now: now) }) {
        case .hit: return true
        case .expired: return false
        case .miss: break
        }
        let keyBytes = try encodeKey(key, operation: .containsValue)
        return try diskCall(key, operation: .containsValue) {
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
        if followsMemoryPressure { MemoryPressureRelay.shared.remove(self) }
        recordWarmKeys()
        memory.updateEach { $0.removeAll() }
        do { try diskCall(nil, operation: .close) { try disk.close() } } catch { failure = failure ?? error }
        changeHub.finish()
        if let failure { throw failure }
    }
}
