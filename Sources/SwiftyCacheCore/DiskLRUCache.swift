#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif
import Dispatch
import Synchronization

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
///     let body = try snapshot.data(at: 1)
/// }
/// ```
///
/// The directory must be exclusive to the cache: it may delete any file in it, and empties it
/// when the journal is unusable. Opening takes an advisory lock, so a second cache on the same
/// directory fails with ``CacheError/Code/directoryLocked``.
///
/// Every method is safe to call from any thread. One lock guards the index and the journal;
/// value bytes are read and written outside it, so readers of different keys run in parallel.
/// The methods block on file I/O: from `async` code, use the `async` overloads, which run it
/// on a dedicated dispatch queue rather than Swift's cooperative pool.
public final class DiskLRUCache: Sendable {
    /// Options for opening a cache.
    public struct Options: Sendable, Hashable {
        /// Whether each commit forces value files, the journal and the directory to stable
        /// storage with `fsync`, so that a power loss cannot drop a commit that returned.
        ///
        /// Without it (the default), a killed process loses no committed entry, but a power
        /// loss may drop recent commits; it never corrupts older ones.
        public var syncsWrites: Bool

        /// - Parameter syncsWrites: Whether commits `fsync`. The default is `false`.
        public init(syncsWrites: Bool = false) {
            self.syncsWrites = syncsWrites
        }
    }

    /// The directory holding the journal and the value files.
    public let directory: URL
    /// The application's data version; a journal written with another one is discarded.
    public let appVersion: Int
    /// The number of value slots in every entry.
    public let valueCount: Int
    /// The options the cache was opened with.
    public let options: Options
    /// What opening found and repaired.
    public let recoveryReport: RecoveryReport

    let environment: CacheEnvironment
    let state: LockedState<CacheState>
    let cleanupQueueForScheduling: DispatchQueue

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
        guard directory.isFileURL else {
            throw CacheError(
                code: .invalidConfiguration, message: "the cache directory must be a file URL, got \(directory)",
                operation: "open")
        }
        guard valueCount >= 1 else {
            throw CacheError(
                code: .invalidConfiguration, message: "valueCount must be at least 1, got \(valueCount)",
                operation: "open")
        }
        guard maxSize >= 1 else {
            throw CacheError(
                code: .invalidConfiguration, message: "maxSize must be at least 1, got \(maxSize)",
                operation: "open")
        }
        var path = directory.standardizedFileURL.path(percentEncoded: false)
        while path.count > 1 && path.hasSuffix("/") { path.removeLast() }
        let environment = CacheEnvironment(
            fileSystem: fileSystem, directoryPath: path, appVersion: appVersion, valueCount: valueCount,
            syncsWrites: options.syncsWrites)
        try environment.createDirectory()
        var state = CacheState(environment: environment, maxSize: maxSize)
        state.lock = try environment.acquireLock()
        let report: RecoveryReport
        do {
            report = try state.recover()
        } catch {
            if state.journalFD >= 0 { try? fileSystem.close(state.journalFD) }
            state.lock?.release(using: fileSystem)
            throw error
        }
        for trash in state.takePendingDeletions() { try? environment.removeFileIfPresent(trash) }
        self.directory = URL(filePath: path, directoryHint: .isDirectory)
        self.appVersion = appVersion
        self.valueCount = valueCount
        self.options = options
        self.recoveryReport = report
        self.environment = environment
        self.state = LockedState(state)
        self.cleanupQueueForScheduling = DispatchQueue(label: "SwiftyCache.DiskLRUCache.cleanup", qos: .utility)
        if state.needsCleanup { scheduleCleanup() }
    }

    deinit {
        // Like a process exit: buffered READ lines are written, open editors are left DIRTY
        // (their files are deleted on the next open), the lock is released.
        withState { state in
            guard !state.isClosed else { return }
            try? state.flushJournal(operation: "deinit")
            if state.journalFD >= 0 { try? state.fileSystem.close(state.journalFD) }
            state.lock?.release(using: state.fileSystem)
            state.lock = nil
            state.isClosed = true
        }
    }

    // MARK: Properties

    /// The committed bytes of all entries. It may exceed ``maxSize`` until the background
    /// eviction catches up; after ``flush()`` it does not.
    public var size: Int { withState { $0.size } }

    /// The number of bytes the cache keeps at most.
    public var maxSize: Int { withState { $0.maxSize } }

    /// The number of committed entries.
    public var count: Int { withState { $0.table.readableCount } }

    /// Hit, miss, write, eviction and removal counts since the cache was opened.
    public var statistics: CacheStatistics { withState { $0.statistics } }

    /// Whether ``close()`` or ``delete()`` was called.
    public var isClosed: Bool { withState { $0.isClosed } }

    /// Whether a journal write failed and no rebuild has repaired it yet. While it is `true`,
    /// edits and removals throw ``CacheError/Code/journalUnavailable``; reads still work.
    public var hasJournalErrors: Bool { withState { $0.journalFailure != nil } }

    /// Changes the size limit. Lowering it evicts least recently used entries in the background.
    ///
    /// - Throws: ``CacheError/Code/invalidConfiguration`` if `maxSize < 1`,
    ///   ``CacheError/Code/cacheClosed`` after ``close()``.
    public func setMaxSize(_ maxSize: Int) throws {
        guard maxSize >= 1 else {
            throw CacheError(
                code: .invalidConfiguration, message: "maxSize must be at least 1, got \(maxSize)",
                operation: "setMaxSize")
        }
        let needsCleanup = try locked(operation: "setMaxSize") { state in
            state.maxSize = maxSize
            return state.claimCleanup()
        }
        if needsCleanup { scheduleCleanup() }
    }

    // MARK: Reading

    /// Returns a snapshot of the entry for `key`, or `nil` if there is none.
    ///
    /// The snapshot keeps the entry's files open: it reads the values as they were now, whatever
    /// later edits, removals and evictions do. Close it (or drop it) to release them. A read
    /// makes the entry the most recently used one.
    ///
    /// An entry whose files were deleted or damaged underneath the cache is dropped and reads
    /// as a miss.
    ///
    /// - Throws: ``CacheError/Code/invalidKey``, ``CacheError/Code/cacheClosed``, or
    ///   ``CacheError/Code/ioFailure`` if a value file cannot be opened for another reason
    ///   than its absence (too many open files, for example).
    /// - Complexity: O(1), plus one `open` and `fstat` per slot.
    public func snapshot(forKey key: String) throws -> Snapshot? {
        try validate(key, operation: "snapshot")
        let (snapshot, needsCleanup) = try locked(operation: "snapshot", key: key) { state in
            let snapshot = try self.openSnapshot(key: key, recordingRead: true, in: &state)
            return (snapshot, state.claimCleanup())
        }
        if needsCleanup { scheduleCleanup() }
        return snapshot
    }

    /// Reads every slot of the entry for `key`; `nil` if there is none.
    ///
    /// - Throws: The errors of ``snapshot(forKey:)`` and ``Snapshot/data(at:)``.
    public func data(forKey key: String) throws -> [Data]? {
        try validate(key, operation: "data")
        // The files are opened under the lock (all old or all new slots) and read outside it,
        // without the Snapshot object a caller would keep.
        let (opened, needsCleanup) = try locked(operation: "data", key: key) { state in
            (try openSlots(key: key, recordingRead: true, in: &state), state.claimCleanup())
        }
        if needsCleanup { scheduleCleanup() }
        guard let opened else { return nil }
        defer { for fd in opened.descriptors { try? environment.fileSystem.close(fd) } }
        var values: [Data] = []
        values.reserveCapacity(valueCount)
        for slot in 0..<valueCount {
            values.append(
                try Snapshot.readWhole(
                    opened.descriptors[slot], length: opened.lengths[slot], key: key, slot: slot, environment: environment))
        }
        return values
    }

    /// Whether a committed entry exists for `key`. It does not count as a read.
    public func contains(_ key: String) throws -> Bool {
        try validate(key, operation: "contains")
        return try locked(operation: "contains", key: key) { state in
            guard let index = state.table.index(of: key) else { return false }
            return state.table[index].isReadable
        }
    }

    /// The keys of committed entries, from least to most recently used.
    ///
    /// - Complexity: O(n).
    public func keys() throws -> [String] {
        try locked(operation: "keys") { state in
            state.table.indicesInLRUOrder.compactMap { index in
                state.table[index].isReadable ? state.table[index].key : nil
            }
        }
    }

    /// Snapshots of the committed entries, from least to most recently used, opened one at a
    /// time as the sequence is iterated. Entries removed meanwhile are skipped. Iterating does
    /// not change the LRU order.
    public func snapshots() throws -> SnapshotSequence {
        SnapshotSequence(cache: self, keys: try keys())
    }

    /// Opens a snapshot under the lock, so that a concurrent commit's renames cannot give it a
    /// mix of old and new slots.
    func openSnapshot(key: String, recordingRead: Bool, in state: inout CacheState) throws -> Snapshot? {
        guard let opened = try openSlots(key: key, recordingRead: recordingRead, in: &state) else { return nil }
        return Snapshot(
            cache: self, key: key, sequenceNumber: opened.sequenceNumber, lengths: opened.lengths,
            descriptors: opened.descriptors)
    }

    /// An entry's value files, opened under the lock.
    struct OpenedSlots: Sendable {
        var descriptors: [Int32]
        var lengths: [Int]
        var sequenceNumber: UInt64
    }

    /// Opens every slot file of `key` and checks its length; `nil` on a miss.
    func openSlots(key: String, recordingRead: Bool, in state: inout CacheState) throws -> OpenedSlots? {
        guard let index = state.table.index(of: key), let lengths = state.table.readableLengths(index) else {
            if recordingRead { state.statistics.missCount += 1 }
            return nil
        }
        let fileSystem = environment.fileSystem
        var descriptors: [Int32] = []
        descriptors.reserveCapacity(valueCount)
        for slot in 0..<valueCount {
            do throws(SystemCallError) {
                let fd = try environment.withSlotPath(key, slot, temporary: false) { path throws(SystemCallError) in
                    try fileSystem.open(cString: path, flags: OpenFlags.readOnly, mode: 0)
                }
                descriptors.append(fd)
                guard try fileSystem.size(of: fd) == Int64(lengths[slot]) else {
                    throw SystemCallError(call: "fstat", errno: Errno.io)
                }
            } catch {
                for fd in descriptors { try? fileSystem.close(fd) }
                let isDamage = error.errno == Errno.noEntry || error.errno == Errno.loop || error.call == "fstat"
                guard isDamage else {
                    throw CacheError.io(error, operation: "snapshot", path: environment.cleanPath(key, slot), key: key)
                }
                // The file was deleted, replaced by a link or truncated underneath the cache.
                state.dropDamagedEntry(index)
                if recordingRead { state.statistics.missCount += 1 }
                return nil
            }
        }
        if recordingRead {
            state.statistics.hitCount += 1
            state.redundantOpCount += 1
            state.table.touch(index)
            state.appendJournal(.read, key: key)
            state.flushReadsIfLarge()
        }
        return OpenedSlots(descriptors: descriptors, lengths: lengths, sequenceNumber: state.table.sequenceNumber(index))
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
    public func edit(_ key: String) throws -> Editor? {
        try validate(key, operation: "edit")
        return try beginEdit(key: key, expectedSequenceNumber: nil, requiresEntry: false)
    }

    /// Creates or replaces every slot of the entry for `key`, atomically: readers see all old or
    /// all new values.
    ///
    /// - Parameters:
    ///   - values: One value per slot, `valueCount` of them.
    ///   - key: A key matching `[a-z0-9_-]{1,120}`.
    /// - Throws: ``CacheError/Code/wrongValueCount``, ``CacheError/Code/editInProgress`` when
    ///   an editor holds the key, and the errors of ``edit(_:)`` and ``Editor/commit()``.
    public func setData(_ values: [Data], forKey key: String) throws {
        try validate(key, operation: "setData")
        guard values.count == valueCount else {
            throw CacheError(
                code: .wrongValueCount, message: "expected \(valueCount) values, got \(values.count)",
                key: key, operation: "setData")
        }
        guard let editorID = try reserveEdit(key: key, expectedSequenceNumber: nil, requiresEntry: false, journalsNow: false)
        else {
            throw editInProgress(key, operation: "setData")
        }
        try writeAndCommit(key: key, editorID: editorID, slots: 0..<valueCount) { values[$0] }
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
        try validate(key, operation: "setPartialData")
        for index in values.keys where !(0..<valueCount).contains(index) {
            throw CacheError.slotOutOfRange(index, valueCount: valueCount, key: key, operation: "setPartialData")
        }
        guard let editorID = try reserveEdit(key: key, expectedSequenceNumber: nil, requiresEntry: true, journalsNow: false)
        else {
            throw editInProgress(key, operation: "setPartialData")
        }
        do {
            try writeAndCommit(key: key, editorID: editorID, slots: values.keys.sorted()) { values[$0] ?? Data() }
        } catch let error as CacheError where error.code == .incompleteEntry {
            // Removed meanwhile: as if the removal came first, there is no entry to update.
            throw CacheError(
                code: .entryNotFound, message: "the entry was removed before the update could be published",
                key: key, operation: "setPartialData", cause: error)
        }
    }

    /// A one-shot write: each slot's file, then the commit, with no ``Editor`` object.
    private func writeAndCommit(
        key: String, editorID: UInt64, slots: some Sequence<Int>, value: (Int) -> Data
    ) throws {
        var written = [Int?](repeating: nil, count: valueCount)
        do {
            for slot in slots {
                let data = value(slot)
                written[slot] = try writeValueFile(key: key, slot: slot) { fd in
                    try data.withUnsafeBytes { buffer in try self.environment.writeAll(fd, buffer) }
                    return data.count
                }
            }
        } catch {
            abandonEdit(key: key, editorID: editorID, written: written)
            throw error
        }
        try completeEdit(key: key, editorID: editorID, written: written)
    }

    private func editInProgress(_ key: String, operation: String) -> CacheError {
        CacheError(
            code: .editInProgress, message: "another editor holds this key; commit or abort it first",
            key: key, operation: operation)
    }

    /// Starts an edit; `nil` when another editor holds the key, or when the entry changed since
    /// `expectedSequenceNumber` (snapshot edits) or does not exist and `requiresEntry`.
    func beginEdit(key: String, expectedSequenceNumber: UInt64?, requiresEntry: Bool) throws -> Editor? {
        let editorID = try reserveEdit(
            key: key, expectedSequenceNumber: expectedSequenceNumber, requiresEntry: requiresEntry, journalsNow: true)
        return editorID.map { Editor(cache: self, key: key, id: $0) }
    }

    /// Marks `key` as being edited and returns the editor's ID; `nil` as for `beginEdit`.
    ///
    /// With `journalsNow`, `DIRTY` is written at once, as the Java cache does for its editors.
    /// One-shot writes pass `false`: their `DIRTY` goes out at commit, just before the renames,
    /// so a crash while the values are being written leaves the previous entry intact.
    func reserveEdit(
        key: String, expectedSequenceNumber: UInt64?, requiresEntry: Bool, journalsNow: Bool
    ) throws -> UInt64? {
        try locked(operation: "edit", key: key) { state -> UInt64? in
            let existing = state.table.index(of: key)
            if let expectedSequenceNumber {
                guard let existing, state.table[existing].isReadable,
                    state.table[existing].sequenceNumber == expectedSequenceNumber
                else { return nil }
            }
            if requiresEntry {
                guard let existing, state.table[existing].isReadable else {
                    throw CacheError(
                        code: .entryNotFound,
                        message: "no entry to update; a new entry needs a value in every slot (use setData)",
                        key: key, operation: "setPartialData")
                }
            }
            if let existing, state.table[existing].isBeingEdited { return nil }
            try state.ensureJournalWritable(operation: "edit", key: key)
            let index = existing ?? state.table.insert(key: key, valueCount: self.valueCount)
            let editorID = state.nextEditorID
            state.nextEditorID += 1
            state.table.setEditor(index, editorID)
            guard journalsNow else { return editorID }
            state.table.setDirtyJournaled(index, true)
            state.table.touch(index)
            // DIRTY reaches the OS before any value file is touched, so that a crash from here
            // on makes the next open delete this entry's files rather than trust them.
            state.appendJournal(.dirty, key: key)
            do {
                try state.flushJournal(operation: "edit", key: key)
            } catch {
                state.table.setEditor(index, 0)
                state.table.setDirtyJournaled(index, false)
                if !state.table[index].isReadable { state.table.remove(at: index) }
                throw error
            }
            return editorID
        }
    }

    /// Publishes an editor's files: renames each `key.i.tmp` over `key.i` and journals `CLEAN`.
    func completeEdit(key: String, editorID: UInt64, written: [Int?]) throws {
        let needsCleanup = try withState { state throws -> Bool in
            guard !state.isClosed else {
                state.deleteTemporaries(key: key, written: written)
                throw CacheError(
                    code: .cacheClosed, message: "the cache was closed while this editor was open; the edit was aborted",
                    key: key, operation: "commit")
            }
            guard let index = state.table.index(of: key), state.table[index].editorID == editorID else {
                state.deleteTemporaries(key: key, written: written)
                throw CacheError(
                    code: .editorDetached, message: "the entry was removed while this editor was open; nothing was written",
                    key: key, operation: "commit")
            }
            let entry = state.table[index]
            if !entry.isReadable, let missing = written.firstIndex(where: { $0 == nil }) {
                state.abortEdit(at: index, written: written)
                throw CacheError(
                    code: .incompleteEntry,
                    message: "a new entry needs a value in every slot; slot \(missing) was never written, so the edit was aborted",
                    key: key, operation: "commit")
            }
            do {
                try state.ensureJournalWritable(operation: "commit", key: key)
            } catch {
                state.deleteTemporaries(key: key, written: written)
                state.table.setEditor(index, 0)
                if !entry.isReadable { state.table.remove(at: index) }
                throw error
            }
            if !entry.isDirtyJournaled {
                // A one-shot write. For an existing entry, DIRTY must reach the OS before any file
                // is renamed, or a crash could pair its old CLEAN line with new files. A new entry
                // has no CLEAN line to protect: its DIRTY goes out with its CLEAN in one write, and
                // a crash before that leaves only unreferenced files, which opening sweeps.
                state.appendJournal(.dirty, key: key)
                state.table.setDirtyJournaled(index, true)
                do {
                    if entry.isReadable { try state.flushJournal(operation: "commit", key: key) }
                } catch {
                    state.deleteTemporaries(key: key, written: written)
                    state.table.setEditor(index, 0)
                    state.table.setDirtyJournaled(index, false)
                    if !entry.isReadable { state.table.remove(at: index) }
                    throw error
                }
            }
            var published = 0
            for slot in 0..<valueCount {
                guard let length = written[slot] else { continue }
                do throws(SystemCallError) {
                    let fileSystem = state.fileSystem
                    try environment.withSlotPath(key, slot, temporary: true) { dirty throws(SystemCallError) in
                        try environment.withSlotPath(key, slot, temporary: false) { clean throws(SystemCallError) in
                            try fileSystem.rename(cString: dirty, to: clean)
                        }
                    }
                } catch {
                    let failure = CacheError.io(
                        error, operation: "commit", path: environment.dirtyPath(key, slot), key: key)
                    if published == 0 {
                        // Nothing is published yet: the old values stand.
                        state.abortEdit(at: index, written: written)
                    } else {
                        // Some slots already hold new values: drop the entry rather than serve a mix.
                        // This editor lets go first, so the entry is dropped, not kept for it.
                        state.deleteTemporaries(key: key, written: written)
                        state.table.setEditor(index, 0)
                        state.table.setDirtyJournaled(index, false)
                        state.dropDamagedEntry(index)
                    }
                    throw failure
                }
                published += 1
                state.size += length - state.table[index].lengths[slot]
                state.table.setLength(index, slot: slot, length)
            }
            state.table.setReadable(index, true)
            state.table.setEditor(index, 0)
            state.table.setDirtyJournaled(index, false)
            state.table.setSequenceNumber(index, state.nextSequenceNumber)
            state.nextSequenceNumber += 1
            state.table.touch(index)
            state.redundantOpCount += 1
            state.appendJournal(.clean(lengths: state.table[index].lengths), key: key)
            // A full cache evicts here, its REMOVE lines in the same journal write as the CLEAN
            // line and its files unlinked after it, as the floor of set-plus-remove needs anyway.
            let victims = state.evictionVictims(limit: CacheState.inlineEvictionLimit, sparing: index)
            for victim in victims { state.appendJournal(.remove, key: state.table[victim].key) }
            do {
                try state.flushJournal(operation: "commit", key: key)
            } catch {
                // The journal holds DIRTY without CLEAN, so a reopen would delete this entry:
                // forget it now too, so that memory and disk agree. The victims stay: the
                // rebuild that repairs the journal writes them from memory.
                state.forgetEntryDeletingFiles(index)
                throw error
            }
            for victim in victims { state.forgetEntryDeletingFiles(victim) }
            state.redundantOpCount += victims.count
            state.statistics.evictionCount += victims.count
            do {
                try state.syncIfDurable(operation: "commit", key: key)
            } catch {
                // Not known to be on stable storage: the caller is told, and the entry is
                // forgotten so that it is not served as if it were.
                state.appendJournal(.remove, key: key)
                try? state.flushJournal(operation: "commit", key: key)
                state.forgetEntryDeletingFiles(index)
                throw error
            }
            state.statistics.writeCount += 1
            return state.claimCleanup()
        }
        if needsCleanup { scheduleCleanup() }
    }

    /// Ends an edit without publishing it.
    func abandonEdit(key: String, editorID: UInt64, written: [Int?]) {
        withState { state in
            guard !state.isClosed, let index = state.table.index(of: key),
                state.table[index].editorID == editorID
            else {
                state.deleteTemporaries(key: key, written: written)
                return
            }
            state.abortEdit(at: index, written: written)
        }
    }

    /// Recreates the directory if it vanished; called when creating a value file finds no directory.
    func restoreMissingDirectory() throws {
        try locked(operation: "restore directory") { state in try state.restoreMissingDirectory() }
    }

    // MARK: Removing

    /// Removes the entry for `key`. An editor open on it goes on as if creating the entry anew:
    /// its commit succeeds only if it wrote every slot (``CacheError/Code/incompleteEntry``
    /// otherwise), as if the removal had come before the edit.
    ///
    /// - Returns: Whether a committed entry existed.
    /// - Throws: ``CacheError/Code/invalidKey``, ``CacheError/Code/cacheClosed``,
    ///   ``CacheError/Code/journalUnavailable`` (nothing was removed).
    /// - Complexity: O(1), plus one `unlink` per slot.
    @discardableResult
    public func remove(_ key: String) throws -> Bool {
        try validate(key, operation: "remove")
        let (existed, needsCleanup) = try locked(operation: "remove", key: key) { state -> (Bool, Bool) in
            guard let index = state.table.index(of: key), state.table[index].isReadable else { return (false, false) }
            try state.ensureJournalWritable(operation: "remove", key: key)
            try state.removeEntries([index], operation: "remove")
            state.statistics.removeCount += 1
            return (true, state.claimCleanup())
        }
        if needsCleanup { scheduleCleanup() }
        return existed
    }

    /// Removes every committed entry that is not being edited.
    ///
    /// - Throws: ``CacheError/Code/cacheClosed``, ``CacheError/Code/journalUnavailable``.
    public func evictAll() throws {
        try locked(operation: "evictAll") { state in
            try state.ensureJournalWritable(operation: "evictAll", key: nil)
            let victims = state.table.indicesInLRUOrder.filter {
                state.table[$0].isReadable && !state.table[$0].isBeingEdited
            }
            try state.removeEntries(victims, operation: "evictAll")
            state.statistics.removeCount += victims.count
        }
    }

    // MARK: Lifecycle

    /// Evicts down to ``maxSize`` and writes buffered journal lines to the OS.
    ///
    /// - Throws: ``CacheError/Code/cacheClosed``, or the journal's I/O error.
    public func flush() throws {
        try locked(operation: "flush") { state in
            try state.ensureJournalWritable(operation: "flush", key: nil)
            try state.trimToSize()
            try state.flushJournal(operation: "flush")
            if state.isJournalRebuildRequired { try state.rebuildJournal() }
        }
    }

    /// Aborts open editors, evicts down to ``maxSize``, flushes and closes the journal, and
    /// releases the directory lock. Open snapshots still read. Closing twice does nothing.
    ///
    /// - Throws: The first I/O error met; the cache is closed regardless.
    public func close() throws {
        let failure: CacheError? = withState { state -> CacheError? in
            guard !state.isClosed else { return nil }
            var failure: CacheError?
            // The editors' objects live on; their commit will throw `cacheClosed`. Every slot
            // counts as written so that any temporary file already there is deleted.
            let everySlot = [Int?](repeating: 0, count: valueCount)
            for index in state.table.indicesInLRUOrder where state.table[index].isBeingEdited {
                state.abortEdit(at: index, written: everySlot)
            }
            do throws(CacheError) {
                try state.ensureJournalWritable(operation: "close", key: nil)
                try state.trimToSize()
                try state.flushJournal(operation: "close")
            } catch {
                failure = error
            }
            if state.journalFD >= 0 { try? state.fileSystem.close(state.journalFD) }
            // No stray file is left once the editors are aborted and the trash is unlinked, unless
            // a delete failed: then the next open sweeps. The marker is written while the
            // directory is still locked, so no other cache can open before it exists.
            for trash in state.takePendingDeletions() { state.deleteFile(trash) }
            if failure == nil && state.journalFailure == nil && !state.hasUndeletedFiles {
                environment.leaveCleanMarker()
            }
            state.lock?.release(using: state.fileSystem)
            state.journalFD = -1
            state.lock = nil
            state.isClosed = true
            return failure
        }
        if let failure { throw failure }
    }

    /// Closes the cache and deletes everything in its directory.
    ///
    /// - Throws: The errors of ``close()``.
    public func delete() throws {
        let failure: (any Error)?
        do {
            try close()
            failure = nil
        } catch {
            failure = error
        }
        environment.emptyDirectory(keepingLock: false)
        if let failure { throw failure }
    }

    // MARK: Helpers

    func validate(_ key: String, operation: String) throws {
        guard Journal.isValidKey(key) else { throw CacheError.invalidKey(key, operation: operation) }
    }

    /// Runs `body` under the lock, after checking that the cache is open.
    func locked<T>(
        operation: String, key: String? = nil, _ body: (inout CacheState) throws -> T
    ) throws -> T {
        try withState { state in
            guard !state.isClosed else { throw CacheError.closed(operation: operation, key: key) }
            return try body(&state)
        }
    }

    /// Runs `body` under the lock, then, with the lock released, unlinks the files it moved to
    /// the trash.
    func withState<T, Failure: Error>(_ body: (inout CacheState) throws(Failure) -> T) throws(Failure) -> T {
        var trash: [String] = []
        defer {
            // A trash file that cannot be unlinked is only a `.tmp` file: the next open without
            // a clean marker sweeps it, and a failed delete here only costs that marker.
            for path in trash { try? environment.removeFileIfPresent(path) }
        }
        return try state.withLock { (state: inout CacheState) throws(Failure) -> T in
            defer { if !state.pendingDeletions.isEmpty { trash = state.takePendingDeletions() } }
            return try body(&state)
        }
    }
}
