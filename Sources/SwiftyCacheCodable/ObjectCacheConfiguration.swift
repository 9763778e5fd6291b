public import SwiftyCacheCore

#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif

/// How an ``ObjectCache`` keeps its values: its limits, its format and storage, the schema
/// version and expiry. One value, with defaults that suit most caches; set what differs.
///
/// ```swift
/// let pages = try ObjectCache<URL, Page>(
///     directory: dir,
///     configuration: .init(maxDiskSize: 50 << 20, memoryLimit: 200, defaultTimeToLive: .seconds(86_400)))
///
/// var durable = ObjectCacheConfiguration()
/// durable.syncsWrites = true
/// let drafts = try store.objects("drafts", of: Draft.self, configuration: durable)
/// ```
public struct ObjectCacheConfiguration: Sendable {
    /// The disk the cache may take; least recently used entries are evicted past it. The
    /// default is 50 MiB.
    ///
    /// In packed storage (the default) it bounds the directory: values, records, journal and
    /// the room compaction works in. Under steady churn the directory stays within it and a
    /// quarter; the entries themselves keep to about two thirds of it. In file storage it
    /// bounds the bytes of the envelopes, values and attachments, as the Java library counts.
    public var maxDiskSize: Int

    /// The number of decoded values kept in memory. The default is 100; 0 keeps none.
    public var memoryLimit: Int

    /// A bound on the encoded bytes of the saved values in memory, or `nil` (the default) for
    /// none.
    public var memoryByteLimit: Int?

    /// How values are encoded: ``ObjectCacheFormat/json`` (the default), Foundation's JSON, or a
    /// property list.
    public var format: ObjectCacheFormat

    /// Where values are kept on disk. The default, `.packed`, appends each entry as one record
    /// to a segment file; a directory an earlier release wrote in file storage is converted when
    /// it opens, its entries kept. `.files` keeps one file per slot, the Java `DiskLruCache`
    /// layout, and converts nothing. A directory is opened with the storage it was created with,
    /// or the open throws.
    public var storage: DiskLRUCache.Storage

    /// Whether every change is forced to stable storage before it returns (see
    /// `DiskLRUCache.Options.syncsWrites`). The default is `false`: a killed process loses
    /// nothing that returned; a power loss may drop the latest changes.
    public var syncsWrites: Bool

    /// Whether the cache only reads: a directory another process writes, or one nobody can
    /// write. Every write throws ``ObjectCacheError/Code/readOnly``. The default is `false`.
    public var isReadOnly: Bool

    /// Whether other processes write the directory too (an app and its extensions in an
    /// app-group container, a server's workers): `DiskLRUCache.Sharing.processes` lets every
    /// cache that opens it with this setting write, each taking the directory's lock for one
    /// operation at a time, and keeps each one's memory from serving a value another process
    /// replaced or removed (it drops it as soon as it sees the other's journal line, within
    /// milliseconds). The default, `.singleProcess`, is one writer at a time. Needs packed
    /// storage; a new directory then packs values of up to 1 MiB in its records (see
    /// `DiskLRUCache.Sharing` and <doc:SharingADirectory>).
    public var sharing: DiskLRUCache.Sharing = .singleProcess

    /// Your value type's version. Opening a cache last opened with another version starts with
    /// an empty cache, unless a ``SchemaMigration`` passed to the cache reads that version (see
    /// <doc:MigratingValues>). The default is 1.
    public var schemaVersion: Int

    /// The bytes pinned values (`ObjectCache.pin(_:)`) may take on disk; `nil`, the default, is half
    /// of what the entries may take: half of ``maxDiskSize`` in file storage, about a third in
    /// packed storage.
    public var maxPinnedDiskSize: Int?

    /// How long entries live unless `set` says otherwise; `nil`, the default, keeps them until
    /// evicted.
    public var defaultTimeToLive: Duration?

    /// Maps keys to the engine's entry names. The default, `nil`, is the naming the directory
    /// records: xxHash (``XXHashKeyHasher``) for a new cache, SHA-256 (``SHA256KeyHasher``)
    /// for one an earlier release wrote, so that its entries keep their names.
    public var keyHasher: (any CacheKeyHasher)?

    /// The current time, for expiry and ages; injectable in tests. The default is the system
    /// wall clock at the resolution of its cheapest read: on Linux the kernel's last tick
    /// (`CLOCK_REALTIME_COARSE`, 1–4 ms), since ages are compared in seconds and a clock read is
    /// a tenth of a memory hit's cost otherwise.
    public var clock: @Sendable () -> Date

    /// Whether the system may delete the cache's files to free space (see
    /// ``CacheStorageClass``). `nil`, the default, declares nothing for a cache opened at a
    /// directory, and takes the store's class in a ``CacheStore``. A declared class is
    /// recorded in the directory when the cache is created; opening it later with the other
    /// class throws ``ObjectCacheError/Code/storageClassConflict``. The class chooses the
    /// directory only through a ``CacheStore``: ``ObjectCache`` opens where it is told.
    public var storageClass: CacheStorageClass?

    /// Whether backups skip the cache's directory, on Apple platforms (its
    /// `isExcludedFromBackup` resource value). The default, `nil`, excludes a durable cache
    /// and leaves a purgeable one as it is (Caches is never backed up). Other platforms
    /// ignore it.
    public var isExcludedFromBackup: Bool?

    /// The data-protection class of the cache's files on Apple platforms, such as
    /// `.completeUntilFirstUserAuthentication`; `nil`, the default, keeps the platform's.
    /// While the class keeps the files closed (the device is locked), calls that need the disk
    /// throw ``ObjectCacheError/Code/unavailable``: nothing is removed or recovered as damage.
    /// Other platforms accept it and apply nothing (the files are `0600` in a `0700` folder
    /// there; see <doc:ChoosingStorage>).
    public var fileProtection: FileProtectionType?

    /// Whether the memory tier shrinks when the system is short of memory (Apple platforms'
    /// memory-pressure events: a warning keeps half the values, a critical event saves the
    /// unsaved values and drops every saved one). The default is `true`. On every platform
    /// ``ObjectCache/trimMemory(_:)`` does the same on request.
    public var trimsMemoryUnderPressure: Bool

    /// How many of the most recently used keys in memory a clean `close()`
    /// records, to be loaded into memory in the background the next time the cache opens (a
    /// warm start). The default, 0, records and loads nothing.
    public var warmStartCount: Int

    /// A configuration; every parameter has the default its property describes.
    public init(
        maxDiskSize: Int = 50 << 20,
        memoryLimit: Int = 100,
        memoryByteLimit: Int? = nil,
        format: ObjectCacheFormat = .json,
        schemaVersion: Int = 1,
        defaultTimeToLive: Duration? = nil,
        storage: DiskLRUCache.Storage = .packed,
        syncsWrites: Bool = false,
        isReadOnly: Bool = false,
        keyHasher: (any CacheKeyHasher)? = nil,
        clock: @escaping @Sendable () -> Date = SystemClock.now,
        storageClass: CacheStorageClass? = nil,
        fileProtection: FileProtectionType? = nil,
        warmStartCount: Int = 0
    ) {
        self.maxDiskSize = maxDiskSize
        self.memoryLimit = memoryLimit
        self.memoryByteLimit = memoryByteLimit
        self.format = format
        self.storage = storage
        self.syncsWrites = syncsWrites
        self.isReadOnly = isReadOnly
        self.schemaVersion = schemaVersion
        self.defaultTimeToLive = defaultTimeToLive
        self.keyHasher = keyHasher
        self.clock = clock
        self.storageClass = storageClass
        self.isExcludedFromBackup = nil
        self.fileProtection = fileProtection
        self.trimsMemoryUnderPressure = true
        self.warmStartCount = warmStartCount
    }

    /// The engine's options for this configuration. Packed storage converts a file-storage
    /// directory: `ObjectCache` directories were file storage before packed storage existed.
    var diskOptions: DiskLRUCache.Options {
        var options = DiskLRUCache.Options(syncsWrites: syncsWrites, isReadOnly: isReadOnly, storage: storage)
        options.migratesFileStorage = storage != .files
        options.maxPinnedSize = maxPinnedDiskSize
        options.maxSizeBoundsDirectory = true
        options.sharing = sharing
        // Sharing keeps every value in a record: a new directory takes the largest inline limit
        // (an existing one keeps its own).
        if sharing == .processes && storage == .packed {
            options.storage = .packed(inlineLimit: DiskLRUCache.Storage.maximumInlineLimit)
        }
        return options
    }
}
