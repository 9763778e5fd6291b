import Dispatch

#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif

/// A cache that keeps a bounded number of bytes in one directory and evicts the least
/// recently used entries when it grows past ``maxSize``.
///
/// Each entry has a key matching `[a-z0-9_-]{1,120}` and a fixed number of value slots
/// (``valueCount``), each a byte string stored in its own file. Every change is recorded in
/// an append-only journal, in the format of the Java `DiskLruCache` (Android, OkHttp), so a
/// cache directory moves between the two.
///
/// ```swift
/// let cache = try DiskLRUCache(directory: url, appVersion: 1, valueCount: 2, maxSize: 2 << 20)
/// try cache.setData([header, body], forKey: "hello")
/// if let snapshot = try cache.snapshot(forKey: "hello") {
///     let body = snapshot.data(at: 1)
/// }
/// ```
///
/// The cache deletes only files it created: the journal's, and the values of keys its journal
/// names. Other files in the directory are left alone and listed in ``recoveryReport``; a
/// `journal` that is not a DiskLruCache journal makes opening throw
/// ``CacheError/Code/notACacheDirectory``. Opening takes an advisory lock, so a second cache on
/// the same directory fails with ``CacheError/Code/directoryLocked``; caches opened with
/// ``Options/isReadOnly`` take none and read beside the writer.
///
/// Every method is safe to call from any thread. One lock guards the index and the journal;
/// value files are opened, read and written outside it, so readers and writers of different
/// keys run in parallel. The methods block on file I/O: from `async` code, use the `async`
/// overloads, which run it on a bounded pool of I/O threads rather than Swift's cooperative pool.
public final class DiskLRUCache: Sendable {
    /// The directory holding the journal and the value files.
    public let directory: URL
    /// The application's data version; a journal written with another one is discarded.
    public var appVersion: Int { state.withLock { $0.journal.appVersion } }
    /// The number of value slots in every entry.
    public let valueCount: Int
    /// The options the cache was opened with.
    public let options: Options
    /// What opening found and repaired.
    public let recoveryReport: RecoveryReport

    let cacheDirectory: CacheDirectory
    /// The file system the cache calls, for the layers above that keep files beside it.
    package var fileSystem: any FileSystem { cacheDirectory.fileSystem }
    /// The values' storage, the one handle the facade holds; what only some storages do is
    /// reached through its capabilities (``ValueStorage/recordStorage``, ...), never its type.
    let storage: any ValueStorage
    /// ``storage``'s record reads, lent without a retain (``LentRecordStorage``): valid for as
    /// long as `storage` holds the storage, which is as long as `self` lives.
    let recordReader: (any RecordReader)?
    let state: LockedState<CacheState>
    /// The subscribers to ``changes(bufferingKeys:)``, shared with the state, which records.
    package let changeHub: ChangeHub<CacheChange>
    /// A read-only cache with subscribers: what tells it that the writer's journal changed.
    let journalWatcher = LockedState<JournalWatcher?>(nil)
    let cleanupQueue: DispatchQueue
    /// Packed storage: the space set aside for a full disk (see ``SpaceReserve``).
    let spaceReserve: SpaceReserve?
    /// Held for the whole of a compaction pass, so that passes never overlap; counts them.
    /// (Not `LockedState<Void>`: ThreadSanitizer reports accesses to an empty state as races.)
    let compactionGate = LockedState(0)
    /// Held by the cleanup pass from the start of a journal rebuild to its end, and by
    /// `close()`, so that the cache never closes (and releases its directory) while a rebuild
    /// writes `journal.tmp` outside the cache lock. Taken before the cache lock, never under it.
    let rebuildGate = LockedState(0)
    /// Held while `journal.pins` is written, with the generation of the pins last written:
    /// writes of the pinned keys happen in order, and an older set never replaces a newer one.
    /// Taken after the cache lock is released, never under it.
    let pinsWriter = LockedState<UInt64>(0)
    /// Packed storage with ``Options/syncsWrites``, whose segments are its log: the durable
    /// commits of concurrent callers share syncs (``GroupCommit``). Taken before the cache
    /// lock, never under it.
    let groupCommit: GroupCommit<CacheState.GroupMember, CacheState.GroupOutcome>?

    /// Opens the cache in `directory`, creating the directory (mode 0700) if needed.
    ///
    /// - Parameters:
    ///   - directory: A file URL for a directory used by this cache alone.
    ///   - appVersion: Your data's version. Opening with a different value than the journal
    ///     records empties the cache.
    ///   - valueCount: The number of slots per entry, at least 1.
    ///   - maxSize: The number of value bytes to keep, at least 1. The journal and file-system
    ///     overhead are not counted.
    ///   - options: See ``Options``. The default buffers writes in the OS.
    /// - Throws: ``CacheError`` with code ``CacheError/Code/invalidConfiguration`` for a bad
    ///   parameter or a path that is not a directory, ``CacheError/Code/directoryLocked`` when
    ///   another cache has the directory open, ``CacheError/Code/ioFailure`` when the
    ///   directory cannot be created or read.
    public convenience init(
        directory: URL, appVersion: Int, valueCount: Int, maxSize: Int, options: Options = Options()
    ) throws {
        try self.init(
            directory: directory, appVersion: appVersion, valueCount: valueCount, maxSize: maxSize,
            options: options, fileSystem: SystemFileSystem())
    }

    /// Opens the cache over another file system, for fault injection in tests.
    package init(
        directory: URL, appVersion: Int, valueCount: Int, maxSize: Int, options: Options = Options(),
        fileSystem: any FileSystem
    ) throws {
        try Self.validate(directory: directory, appVersion: appVersion, valueCount: valueCount, maxSize: maxSize)
        let path = Self.normalizedPath(of: directory)
        let cacheDirectory = CacheDirectory(fileSystem: fileSystem, path: path)
        // A `journal` of something else is refused before anything is created; one of the
        // other storage too, unless it is file storage that this open converts.
        let selection = try CacheError.reporting(.open) {
            try StorageSelection.negotiate(
                found: try cacheDirectory.journalHeader()?.format, requested: options.storage.format,
                options: options, journalPath: cacheDirectory.journalPath)
        }
        if options.sharing.isShared {
            guard selection.format.storesLocations, !options.isReadOnly else {
                throw CacheError.invalidConfiguration(
                    options.isReadOnly
                        ? "a read-only cache reads beside any writers already: open it without sharing: .processes"
                        : "sharing: .processes needs packed storage (the Java format has a single writer)",
                    path: path, operation: .open)
            }
        }
        let storage = selection.makeStorage(
            directory: cacheDirectory, valueCount: valueCount, maxSize: maxSize, options: options)
        // A cache that writes records keeps space aside for a full disk (no more than it may hold).
        let spaceReserve =
            (storage.compactingStorage != nil && !options.isReadOnly)
            ? SpaceReserve(
                directory: cacheDirectory,
                ceiling: min(
                    Int64(maxSize),
                    max(64, options.growsPackedSegments ? PackedStorage.largestSegmentSize : options.packedSegmentSize))
            )
            : nil
        var journal = JournalWriter(
            directory: cacheDirectory, appVersion: appVersion, valueCount: valueCount, syncsWrites: options.syncsWrites,
            format: selection.format)
        journal.reserve = spaceReserve
        journal.replacesInPlace = options.sharing.isShared
        let changeHub = ChangeHub<CacheChange>()
        var state = CacheState(
            directory: cacheDirectory, storage: storage, journal: journal, maxSize: maxSize,
            isReadOnly: options.isReadOnly, changes: changeHub)
        state.replayFormat = selection.replayFormat
        if options.maxSizeBoundsDirectory { state.budget = storage.sizeBudget }
        // Whether the journal found holds a log's `TAIL` lines: read before it is replayed.
        if selection.format.storesLocations, !options.isReadOnly, let header = try? cacheDirectory.journalHeader() {
            state.journal.logsRecords = header.logsRecords
            state.journal.marksBatches = header.marksBatches
        }
        let report = try CacheError.reporting(.open) {
            try state.open(readOnly: options.isReadOnly, shared: options.sharing.isShared)
        }
        state.loadPins()
        state.maxPinnedSize = options.maxPinnedSize
        // Whether the journal recovery left may hold batches already: read from its header.
        if selection.format.storesLocations, !options.isReadOnly, let header = try? cacheDirectory.journalHeader() {
            state.journal.marksBatches = header.marksBatches
        }
        self.directory = URL(filePath: path, directoryHint: .isDirectory)
        self.valueCount = valueCount
        self.options = options
        self.recoveryReport = report
        self.cacheDirectory = cacheDirectory
        self.changeHub = changeHub
        self.storage = storage
        self.recordReader = storage.recordReader
        self.cleanupQueue = DispatchQueue(label: "SwiftyCache.DiskLRUCache.cleanup", qos: .utility)
        self.spaceReserve = spaceReserve
        // Zeros written to the page cache, once (and again as the cache grows).
        spaceReserve?.ensure(liveBytes: storage.compactingStorage?.liveBytes ?? 0)
        let needsCleanup = state.claimCleanup()
        self.groupCommit =
            options.syncsWrites && state.journal.logsRecords && storage.recordStorage != nil && !state.isShared
            ? GroupCommit() : nil
        self.state = LockedState(state)
        if needsCleanup { scheduleCleanup() }
    }

    /// Checks the parameters of an open.
    private static func validate(directory: URL, appVersion: Int, valueCount: Int, maxSize: Int) throws(CacheError) {
        guard directory.isFileURL else {
            throw CacheError.invalidConfiguration(
                "the cache directory must be a file URL, got \(directory)", operation: .open)
        }
        guard (1...Int(Int32.max)).contains(valueCount) else {
            throw CacheError.invalidConfiguration(
                "valueCount must be between 1 and \(Int32.max), got \(valueCount)", operation: .open)
        }
        // The Java cache reads appVersion as an int: another value would make it empty the directory.
        guard (Int(Int32.min)...Int(Int32.max)).contains(appVersion) else {
            throw CacheError.invalidConfiguration(
                "appVersion must fit in 32 bits (Int32), as the Java DiskLruCache reads it; got \(appVersion)",
                operation: .open)
        }
        guard maxSize >= 1 else {
            throw CacheError.invalidConfiguration("maxSize must be at least 1, got \(maxSize)", operation: .open)
        }
    }

    deinit {
        journalWatcher.withLock { $0?.stop() }
        withState { $0.closeAsProcessExit() }
        changeHub.finish()
    }

    /// The directory's path, standardized and without a trailing slash.
    static func normalizedPath(of directory: URL) -> String {
        var path = directory.standardizedFileURL.path(percentEncoded: false)
        while path.count > 1 && path.hasSuffix("/") { path.removeLast() }
        return path
    }

    // MARK: Properties

    /// The committed bytes of all entries. It may exceed ``maxSize`` until the background
    /// eviction catches up; after `flush()` it does not.
    public var size: Int { withState(catchesUp: true) { $0.size } }

    /// The number of bytes the cache keeps at most.
    public var maxSize: Int { withState { $0.maxSize } }

    /// The number of committed entries.
    public var count: Int { withState(catchesUp: true) { $0.table.readableCount } }

    /// Hit, miss, write, eviction and removal counts since the cache was opened.
    public var statistics: CacheStatistics {
        var statistics = withState { $0.statistics }
        statistics.corruptRecordCount = storage.corruptRecordCount
        return statistics
    }

    /// Whether `close()` or ``delete()-672ar`` was called.
    public var isClosed: Bool { withState { $0.isClosed } }

    /// Whether a journal write failed and no rebuild has repaired it yet. While it is `true`,
    /// edits and removals throw ``CacheError/Code/journalUnavailable``; reads still work.
    public var hasJournalErrors: Bool {
        withState {
            $0.journal.adoptDeferredFailure()
            return $0.journal.failure != nil
        }
    }

    /// Changes the size limit. Lowering it evicts least recently used entries in the background.
    ///
    /// - Throws: ``CacheError/Code/invalidConfiguration`` if `maxSize < 1`,
    ///   ``CacheError/Code/cacheClosed`` after `close()`.
    public func setMaxSize(_ maxSize: Int) throws {
        guard !options.isReadOnly else { throw CacheError.readOnly(operation: .setMaxSize) }
        guard maxSize >= 1 else {
            throw CacheError.invalidConfiguration("maxSize must be at least 1, got \(maxSize)", operation: .setMaxSize)
        }
        try locked(operation: .setMaxSize, claimsCleanup: true) { $0.maxSize = maxSize }
    }

    /// The keys that lowering the limit to `maxSize` would evict, least recently used first,
    /// evicting nothing and leaving the LRU order as it is. Pinned entries are passed by.
    ///
    /// - Complexity: O(keys returned + entries pinned or being edited among them).
    public func keysEvicted(atMaxSize maxSize: Int) -> [String] {
        withState(catchesUp: true) { $0.keysEvicted(atMaxSize: maxSize) }
    }

    // MARK: Writing

    /// Starts editing the entry for `key`, creating it if needed; `nil` if another editor holds it.
    ///
    /// Set values with ``Editor/setData(_:at:)`` or ``Editor/write(at:_:)``, then call
    /// ``Editor/commit()`` or ``Editor/abort()``. A new entry needs a value in every slot; an
    /// existing one keeps the slots the editor does not write.
    ///
    /// - Throws: ``CacheError/Code/invalidKey``, ``CacheError/Code/cacheClosed``,
    ///   ``CacheError/Code/journalUnavailable``.
    public func edit(forKey key: String) throws -> Editor? {
        try validate(key, operation: .edit)
        return try beginEdit(key: key, expectedSequenceNumber: nil)
    }

    /// Creates or replaces every slot of the entry for `key`, atomically: readers see all old or
    /// all new values.
    ///
    /// A call that throws leaves the entry's previous values in packed storage, also when its
    /// record was written and its journal line or sync failed; the key it would have created
    /// stays absent. In file storage, once the new files are renamed into place (the Java
    /// layout keeps no earlier copy) a failure drops the entry instead.
    ///
    /// - Parameters:
    ///   - values: One value per slot, `valueCount` of them.
    ///   - key: A key matching `[a-z0-9_-]{1,120}`.
    /// - Throws: ``CacheError/Code/wrongValueCount``, ``CacheError/Code/editInProgress`` when
    ///   an editor holds the key, and the errors of ``edit(forKey:)-6ed5f`` and ``Editor/commit()``.
    public func setData(_ values: [Data], forKey key: String) throws {
        try validate(key, operation: .setData)
        guard values.count == valueCount else {
            throw CacheError.wrongValueCount(expected: valueCount, got: values.count, key: key, operation: .setData)
        }
        // Packed storage, small values: the record is built here, outside the lock, and
        // committed in one lock hold.
        if let records = storage.recordStorage, let record = records.encodeRecord(key: key, values: values) {
            let lengths = SlotLengths(values.lazy.map(\.count))
            if let groupCommit {
                if try commitInGroup(groupCommit, key: key, lengths: lengths, record: record) { return }
            } else {
                let committed = try locked(
                    operation: .setData, key: key, access: .appendsFirst, claimsCleanup: true
                ) { state in try state.commitRecord(key: key, lengths: lengths, record: record) }
                if committed { return }
            }
        }
        try writeAtOnce(key: key, slots: 0..<valueCount, requiresEntry: false, operation: .setData) { values[$0] }
    }

    /// Replaces some slots of an existing entry; the others keep their values.
    ///
    /// - Parameters:
    ///   - values: New values by slot index.
    ///   - key: The key of an existing entry.
    /// - Throws: ``CacheError/Code/entryNotFound`` if there is no entry for `key` (a new entry
    ///   needs every slot), ``CacheError/Code/slotOutOfRange``,
    ///   ``CacheError/Code/editInProgress``, and the errors of ``Editor/commit()``.
    public func setPartialData(_ values: [Int: Data], forKey key: String) throws {
        try validate(key, operation: .setPartialData)
        for index in values.keys where !(0..<valueCount).contains(index) {
            throw CacheError.slotOutOfRange(index, valueCount: valueCount, key: key, operation: .setPartialData)
        }
        do {
            try writeAtOnce(key: key, slots: values.keys.sorted(), requiresEntry: true, operation: .setPartialData) {
                values[$0] ?? Data()
            }
        } catch let error as CacheError where error.code == .incompleteEntry {
            // Removed meanwhile: as if the removal came first, there is no entry to update.
            throw CacheError.entryNotFound(
                key: key, operation: .setPartialData,
                message: "the entry was removed before the update could be published", cause: error)
        }
    }

}
