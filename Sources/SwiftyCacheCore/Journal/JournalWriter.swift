/// Appends to the journal: buffers lines, writes them with one `write` per flush, remembers a
/// failed write (after which nothing is appended until a rebuild succeeds), and swaps in a
/// rebuilt journal. The format itself is ``Journal``'s; what the lines say is ``CacheState``'s
/// decision.
struct JournalWriter {
    let directory: CacheDirectory
    var appVersion: Int
    let valueCount: Int
    /// The journal's format: files (Java-compatible) or packed.
    let format: Journal.Format
    /// Whether a flush of a commit is followed by `fsync` of the journal and the directory.
    let syncsWrites: Bool
    /// The open journal, `-1` before open and after close (`+Appending` sets it too).
    var fd: Int32 = -1
    /// Lines not yet written to the file (emptied only by this type and its extensions).
    var buffer: [UInt8] = []
    /// Set when a write or rebuild failed; cleared by a successful rebuild.
    var failure: CacheError?
    /// Counts the journals swapped in: a rebuild begun before a swap is stale.
    private(set) var generation = 0
    /// While a rebuild is written outside the lock (see ``beginRebuild()``): the lines appended
    /// since its snapshot, which the new journal must end with.
    private(set) var rebuildTail: [UInt8]?
    /// Lines appended since the journal was last rewritten (or, after an open, its text lines).
    private(set) var linesSinceRewrite = 0
    /// Whether the journal's bulk is `BLOCK` lines (``JournalBlock``): a packed journal this
    /// session rewrote, or one the open replayed that had them.
    private(set) var isBlockCompact = false
    /// Lines in ``rebuildTail``.
    private var tailLineCount = 0

    /// Keeps the order of the file's writes when buffered `READ` lines are written outside the
    /// cache lock (``takeReadFlush()``): every write and every change of ``fd`` holds it.
    let output = JournalOutput()
    /// Packed storage: the space set aside for a full disk (see ``SpaceReserve``).
    var reserve: SpaceReserve?
    /// Whether the journal's header has the magic of one that may hold `BATCH` lines
    /// (``Journal/packedBatchMagic``): read at open, set for good by the first batch (whose
    /// rebuild writes it), and kept by every rebuild after.
    var marksBatches = false
    /// Whether a rebuild renames over the journal in one step (``DiskLRUCache/Sharing``), not
    /// by way of `journal.bkp` (Java's way, which leaves the old file linked for a moment).
    var replacesInPlace = false
    /// Whether its magic is a log's (``Journal/packedLogMagic``): as ``marksBatches``, set by
    /// the first open with `syncsWrites`.
    var logsRecords = false

    /// READ lines may stay buffered up to this many bytes.
    static let readBufferLimit = 8 << 10

    init(
        directory: CacheDirectory, appVersion: Int, valueCount: Int, syncsWrites: Bool, format: Journal.Format = .files
    ) {
        self.directory = directory
        self.appVersion = appVersion
        self.valueCount = valueCount
        self.format = format
        self.syncsWrites = syncsWrites
    }

    private var fileSystem: any FileSystem { directory.fileSystem }

    /// Buffers the line for `operation` on `key`. While the journal is broken nothing is
    /// appended: the rebuild that repairs it writes the whole index, and a line must never
    /// follow a torn one.
    mutating func append(_ operation: Journal.Operation, key: String) {
        guard failure == nil else { return }
        let start = buffer.count
        Journal.appendLine(operation, key: key, format: format, to: &buffer)
        linesSinceRewrite &+= 1
        if rebuildTail != nil {
            rebuildTail?.append(contentsOf: buffer[start...])
            tailLineCount &+= 1
        }
    }

    /// Buffers a batch's `BATCH` line (``Journal/appendBatchLine(_:format:to:)``): its members
    /// replay all or none. Nothing while the journal is broken, as for ``append(_:key:)``.
    mutating func appendBatch(_ members: [Journal.Member]) {
        guard failure == nil else { return }
        let start = buffer.count
        Journal.appendBatchLine(members, format: format, to: &buffer)
        linesSinceRewrite &+= 1
        if rebuildTail != nil {
            rebuildTail?.append(contentsOf: buffer[start...])
            tailLineCount &+= 1
        }
    }

    /// What the open's replay found: `textLines` lines of text, `blockRecords` entries in
    /// blocks.
    mutating func noteReplayed(textLines: Int, blockRecords: Int) {
        linesSinceRewrite = textLines
        isBlockCompact = blockRecords > 0
    }

    /// Whether replaying the journal costs about what loading a saved index does: it is
    /// blocks, and few lines were added since (an eighth of `entries` at most). A clean close
    /// then leaves no snapshot beside it.
    func replaysLikeASnapshot(entries: Int) -> Bool {
        isBlockCompact && linesSinceRewrite <= entries / 8
    }

    /// Writes buffered lines to the OS (not to stable storage; see ``syncIfDurable(operation:key:)``).
    ///
    /// - Parameter freesSpace: Whether the lines record removals, which free space: on a full
    ///   disk they may use the ``reserve``. Commits may not: the reserve is for leaving a full
    ///   disk, not for filling it further.
    /// - Throws: ``CacheError/Code/journalUnavailable`` while an earlier failure stands, or the
    ///   write's ``CacheError/Code/ioFailure``, which then stands.
    mutating func flush(operation: CacheError.Operation, key: String? = nil, freesSpace: Bool = false)
        throws(CacheError)
    {
        if let failure { throw CacheError.journalUnavailable(failure, operation: operation, key: key) }
        guard !buffer.isEmpty else { return }
        output.lock()
        defer { output.unlock() }
        if let deferred = output.takeFailure() {
            adopt(deferred)
            throw CacheError.journalUnavailable(deferred, operation: operation, key: key)
        }
        do {
            try output.append(buffer, to: fd, with: fileSystem, reserve: freesSpace ? reserve : nil)
            buffer.removeAll(keepingCapacity: true)
        } catch {
            buffer.removeAll(keepingCapacity: true)
            let failure = CacheError.ioFailure(error, operation: operation, path: directory.journalPath, key: key)
            self.failure = failure
            throw failure
        }
    }

    /// Whether enough lines are buffered for ``takeReadFlush()`` to take them.
    var isReadFlushDue: Bool { buffer.count >= Self.readBufferLimit }

    /// Takes the buffered lines for the caller to write once it has released the cache lock
    /// (``JournalReadFlush/write()``), when enough `READ` lines have piled up; `nil` otherwise,
    /// or while the journal is broken or closed. The output lock stays held until that write,
    /// so every later write of the journal follows it.
    ///
    /// - Complexity: O(1); waits only for a previous such write still in progress.
    mutating func takeReadFlush() -> JournalReadFlush? {
        guard isReadFlushDue, failure == nil, fd >= 0 else { return nil }
        output.lock()
        if let deferred = output.takeFailure() {
            adopt(deferred)
            output.unlock()
            return nil
        }
        let bytes = buffer
        buffer = []
        buffer.reserveCapacity(Self.readBufferLimit + 256)
        return JournalReadFlush(
            output: output, fileSystem: fileSystem, fd: fd, bytes: bytes, path: directory.journalPath)
    }

    /// Takes on the failure of a write made outside the cache lock, if one happened: the
    /// journal is then broken, as if this writer's own write had failed.
    mutating func adoptDeferredFailure() {
        guard failure == nil else { return }
        output.lock()
        defer { output.unlock() }
        if let deferred = output.takeFailure() { adopt(deferred) }
    }

    mutating func adopt(_ deferred: CacheError) {
        failure = deferred
        buffer.removeAll(keepingCapacity: true)
    }

    /// With `syncsWrites`, forces the journal and, with `includesDirectory`, the directory to
    /// stable storage. A commit that created or renamed no name in the directory (a packed
    /// record: segments are synced into the directory when they are created) needs only the
    /// journal: the journal's own name was made durable when it was created or swapped in.
    mutating func syncIfDurable(
        operation: CacheError.Operation, key: String?, includesDirectory: Bool = true
    ) throws(CacheError) {
        guard syncsWrites else { return }
        try sync(operation: operation, key: key, includesDirectory: includesDirectory)
    }

    /// Forces the journal and the directory to stable storage, whatever `syncsWrites` says:
    /// before bytes that lines already written supersede are deleted (compaction).
    ///
    /// A failed sync breaks the journal, as a failed write does: the kernel may have dropped the
    /// lines it could not write and report the next sync of the same file as a success, so
    /// nothing written since the last good sync is trusted. Every later call that needs the
    /// journal throws until a rebuild (a new file, synced whole) succeeds.
    mutating func sync(operation: CacheError.Operation, key: String?, includesDirectory: Bool = true) throws(CacheError)
    {
        if let failure { throw CacheError.journalUnavailable(failure, operation: operation, key: key) }
        do {
            try fileSystem.fsync(fd)
            if includesDirectory { try directory.sync() }
        } catch {
            let failure = CacheError.ioFailure(error, operation: operation, path: directory.path, key: key)
            self.failure = failure
            buffer.removeAll(keepingCapacity: true)
            throw failure
        }
    }

    /// The header every journal starts with, for a rebuild to append entries to.
    func header() -> [UInt8] {
        let header = Journal.header(
            appVersion: appVersion, valueCount: valueCount, format: format, marksBatches: marksBatches,
            logsRecords: logsRecords)
        return Array(header.utf8)
    }

    /// Writes the journal `write` writes to the file it is given (a header and the live entries)
    /// to `journal.tmp` and swaps it in, keeping
    /// the old journal as `journal.bkp` during the swap; the caller deletes the backup. On
    /// success the buffer is dropped (the new journal holds everything) and any failure cleared.
    ///
    /// The new journal and the directory reach stable storage before the swap returns, with or
    /// without `syncsWrites`: the old journal may be durable, and a power cut must never find
    /// the new name over bytes that never reached the disk (the rename over a name moved away
    /// first is no replace, so file systems do not flush it by themselves).
    ///
    /// - Complexity: O(bytes), and two `fsync`s.
    mutating func replace(writing write: (Int32) throws(SystemCallFailure) -> Void) throws(CacheError) {
        let newFile: Int32
        do {
            newFile = try writeTemporaryJournal(write)
        } catch  where error.errno == Errno.noSpace && reserve?.release() == true {
            // A full disk: the reserve makes the room, once.
            do {
                newFile = try writeTemporaryJournal(write)
            } catch {
                throw recordFailure(error, path: directory.temporaryJournalPath)
            }
        } catch {
            throw recordFailure(error, path: directory.temporaryJournalPath)
        }
        try swapIn(newFile, linesAfterBulk: 0)
    }

    /// `journal.tmp` as `write` wrote it, synced, open; nothing left of it when it fails.
    private func writeTemporaryJournal(_ write: (Int32) throws(SystemCallFailure) -> Void) throws(SystemCallFailure)
        -> Int32
    {
        let newFile = try createTemporaryJournal()
        do {
            try write(newFile)
            try fileSystem.fsync(newFile)
        } catch {
            try? fileSystem.close(newFile)
            try? fileSystem.unlink(directory.temporaryJournalPath)
            throw error
        }
        return newFile
    }

    /// Creates an empty `journal.tmp` for a rebuild and returns it open for writing.
    private func createTemporaryJournal() throws(SystemCallFailure) -> Int32 {
        // A journal.tmp left by a crash, or planted as a link, is replaced, never followed.
        try fileSystem.removeFileIfPresent(directory.temporaryJournalPath)
        return try fileSystem.open(
            directory.temporaryJournalPath, flags: OpenFlags.createTruncate, mode: FileModes.file)
    }

    /// Closes the written `journal.tmp` (`newFile`) and renames it over the journal, keeping the
    /// old one as `journal.bkp` meanwhile; then appends to the new journal.
    private mutating func swapIn(_ newFile: Int32, linesAfterBulk: Int) throws(CacheError) {
        var failedPath = directory.temporaryJournalPath
        do {
            // close() releases the descriptor even when it reports an error: never close twice.
            do {
                try fileSystem.close(newFile)
            } catch {
                try? fileSystem.unlink(directory.temporaryJournalPath)
                throw error
            }
            failedPath = directory.journalPath
            // Sharing: the old file unlinked the instant the new one takes its name.
            if !replacesInPlace, try fileSystem.kind(of: directory.journalPath) != nil {
                try fileSystem.rename(directory.journalPath, to: directory.backupJournalPath)
            }
            try fileSystem.rename(directory.temporaryJournalPath, to: directory.journalPath)
            let newFD = try fileSystem.open(directory.journalPath, flags: OpenFlags.append, mode: FileModes.file)
            // A write of READ lines to the old file may still be in progress: wait for it. What
            // it writes is in the new journal too (the rebuild's tail, or the rebuilt journal).
            output.lock()
            if fd >= 0 { try? fileSystem.close(fd) }
            fd = newFD
            output.size = try? fileSystem.size(of: newFD)
            _ = output.takeFailure()
            output.unlock()
            // The renames reach the disk before the caller deletes the backup.
            try directory.sync()
        } catch {
            throw recordFailure(error, path: failedPath)
        }
        buffer.removeAll(keepingCapacity: true)
        failure = nil
        generation += 1
        // What follows the rewritten bulk: the lines appended while it was written.
        linesSinceRewrite = linesAfterBulk
        isBlockCompact = format.storesLocations
        rebuildTail = nil
        tailLineCount = 0
    }

    /// Breaks the journal after a failed rebuild. The buffered lines go too, as when a write
    /// fails (``flush(operation:key:)``) or a deferred failure is adopted: nothing is written
    /// while the failure stands, and the rebuild that repairs it writes the whole index.
    private mutating func recordFailure(_ error: any Error, path: String) -> CacheError {
        let failure = CacheError.ioFailure(error, operation: .rebuildingJournal, path: path)
        self.failure = failure
        buffer.removeAll(keepingCapacity: true)
        rebuildTail = nil
        return failure
    }

    // MARK: Rebuilding outside the lock

    /// A rebuild whose bulk is written outside the cache lock: ``beginRebuild()`` creates
    /// `journal.tmp` and starts keeping the lines appended from then on; the caller writes the
    /// snapshot's lines to ``file`` without the lock; ``finishRebuild(_:written:)`` appends the
    /// kept lines and swaps the file in, under the lock again.
    struct PendingRebuild: Sendable {
        /// `journal.tmp`, open for writing; owned by the rebuild until it is finished.
        let file: Int32
        /// The writer's ``generation`` when the rebuild began.
        let generation: Int
    }

    /// Starts a rebuild written outside the lock; `nil` while the journal is broken or closed
    /// (the synchronous ``replace(writing:)`` repairs those), or when `journal.tmp` cannot be
    /// created: the old journal stays in use, and a later pass tries again.
    mutating func beginRebuild() -> PendingRebuild? {
        guard failure == nil, fd >= 0, rebuildTail == nil else { return nil }
        guard let file = try? createTemporaryJournal() else { return nil }
        rebuildTail = []
        tailLineCount = 0
        return PendingRebuild(file: file, generation: generation)
    }

    /// Ends a rebuild begun with ``beginRebuild()``, whose snapshot was written to its file
    /// (`written`) or not. Returns whether the new journal was swapped in. A rebuild that lost
    /// its turn (the journal was replaced or broke meanwhile, or closed), or failed, is dropped
    /// and the old journal stays in use, not broken; a failure of the swap itself breaks the
    /// journal as ``replace(writing:)`` does.
    ///
    /// - Complexity: O(lines appended since the rebuild began).
    mutating func finishRebuild(_ rebuild: PendingRebuild, written: Bool) throws(CacheError) -> Bool {
        guard rebuild.generation == generation else {
            // A synchronous rebuild replaced the journal, and `journal.tmp` with it: the file
            // this rebuild wrote is already unlinked. Nothing of it is left to remove.
            try? fileSystem.close(rebuild.file)
            return false
        }
        let tail = rebuildTail ?? []
        guard written, failure == nil, fd >= 0 else {
            rebuildTail = nil
            tailLineCount = 0
            discard(rebuild)
            return false
        }
        do {
            try fileSystem.writeAll(rebuild.file, tail)
            // The snapshot was synced outside the lock (`JournalRebuild.write`); this syncs the tail.
            try fileSystem.fsync(rebuild.file)
        } catch {
            rebuildTail = nil
            tailLineCount = 0
            discard(rebuild)
            return false
        }
        try swapIn(rebuild.file, linesAfterBulk: tailLineCount)
        return true
    }

    /// Closes and deletes the `journal.tmp` of a rebuild that will not be swapped in. With the
    /// generation unchanged, the name is this rebuild's file, or what a synchronous rebuild that
    /// failed left of its own (which the repair writes again): only a swap, which bumps
    /// ``generation``, puts a needed file there.
    private func discard(_ rebuild: PendingRebuild) {
        try? fileSystem.close(rebuild.file)
        try? fileSystem.unlink(directory.temporaryJournalPath)
    }

    /// Closes the file; buffered lines not flushed are dropped.
    mutating func close() {
        output.lock()
        if fd >= 0 { try? fileSystem.close(fd) }
        fd = -1
        output.unlock()
        buffer.removeAll()
    }
}
