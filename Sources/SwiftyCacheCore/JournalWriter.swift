/// Appends to the journal: buffers lines, writes them with one `write` per flush, remembers a
/// failed write (after which nothing is appended until a rebuild succeeds), and swaps in a
/// rebuilt journal. The format itself is ``Journal``'s; what the lines say is ``CacheState``'s
/// decision.
struct JournalWriter {
    let directory: CacheDirectory
    let appVersion: Int
    let valueCount: Int
    /// The journal's format: files (Java-compatible) or packed.
    let format: Journal.Format
    /// Whether a flush of a commit is followed by `fsync` of the journal and the directory.
    let syncsWrites: Bool
    /// The open journal, `-1` before open and after close.
    private(set) var fd: Int32 = -1
    /// Lines not yet written to the file.
    private(set) var buffer: [UInt8] = []
    /// Set when a write or rebuild failed; cleared by a successful rebuild.
    private(set) var failure: CacheError?

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
        Journal.appendLine(operation, key: key, format: format, to: &buffer)
    }

    /// Writes buffered lines to the OS (not to stable storage; see ``syncIfDurable(operation:key:)``).
    ///
    /// - Throws: ``CacheError/Code/journalUnavailable`` while an earlier failure stands, or the
    ///   write's ``CacheError/Code/ioFailure``, which then stands.
    mutating func flush(operation: String, key: String? = nil) throws(CacheError) {
        if let failure { throw CacheError.journalUnavailable(failure, operation: operation, key: key) }
        guard !buffer.isEmpty else { return }
        do {
            try fileSystem.writeAll(fd, buffer)
            buffer.removeAll(keepingCapacity: true)
        } catch {
            buffer.removeAll(keepingCapacity: true)
            let failure = CacheError.ioFailure(error, operation: operation, path: directory.journalPath, key: key)
            self.failure = failure
            throw failure
        }
    }

    /// Whether enough lines are buffered for ``flushReadsIfLarge()`` to write them.
    var isReadFlushDue: Bool { buffer.count >= Self.readBufferLimit }

    /// Flushes READ lines once enough have piled up; errors only mark the journal broken.
    mutating func flushReadsIfLarge() {
        if isReadFlushDue { try? flush(operation: "read") }
    }

    /// With `syncsWrites`, forces the journal and the directory to stable storage.
    func syncIfDurable(operation: String, key: String?) throws(CacheError) {
        guard syncsWrites else { return }
        do {
            try fileSystem.fsync(fd)
            try directory.sync()
        } catch {
            throw CacheError.ioFailure(error, operation: operation, path: directory.path, key: key)
        }
    }

    /// Opens the existing journal for appending.
    mutating func openForAppending() throws(CacheError) {
        do {
            fd = try fileSystem.open(directory.journalPath, flags: OpenFlags.append, mode: FileModes.file)
        } catch {
            throw CacheError.ioFailure(error, operation: "open", path: directory.journalPath)
        }
    }

    /// The header every journal starts with, for a rebuild to append entries to.
    func header() -> [UInt8] {
        Array(Journal.header(appVersion: appVersion, valueCount: valueCount, format: format).utf8)
    }

    /// Writes `bytes` (a header and the live entries) to `journal.tmp` and swaps it in, keeping
    /// the old journal as `journal.bkp` during the swap; the caller deletes the backup. On
    /// success the buffer is dropped (the new journal holds everything) and any failure cleared.
    ///
    /// - Complexity: O(bytes).
    mutating func replace(with bytes: [UInt8]) throws(CacheError) {
        var failedPath = directory.temporaryJournalPath
        do {
            // A journal.tmp left by a crash, or planted as a link, is replaced, never followed.
            try fileSystem.removeFileIfPresent(directory.temporaryJournalPath)
            let newFile = try fileSystem.open(
                directory.temporaryJournalPath, flags: OpenFlags.createTruncate, mode: FileModes.file)
            do {
                try fileSystem.writeAll(newFile, bytes)
                if syncsWrites { try fileSystem.fsync(newFile) }
            } catch {
                try? fileSystem.close(newFile)
                try? fileSystem.unlink(directory.temporaryJournalPath)
                throw error
            }
            // close() releases the descriptor even when it reports an error: never close twice.
            do {
                try fileSystem.close(newFile)
            } catch {
                try? fileSystem.unlink(directory.temporaryJournalPath)
                throw error
            }
            failedPath = directory.journalPath
            if try fileSystem.kind(of: directory.journalPath) != nil {
                try fileSystem.rename(directory.journalPath, to: directory.backupJournalPath)
            }
            try fileSystem.rename(directory.temporaryJournalPath, to: directory.journalPath)
            let newFD = try fileSystem.open(directory.journalPath, flags: OpenFlags.append, mode: FileModes.file)
            if fd >= 0 { try? fileSystem.close(fd) }
            fd = newFD
            if syncsWrites { try directory.sync() }
        } catch {
            let failure = CacheError.ioFailure(error, operation: "rebuild journal", path: failedPath)
            self.failure = failure
            throw failure
        }
        buffer.removeAll(keepingCapacity: true)
        failure = nil
    }

    /// Closes the file; buffered lines not flushed are dropped.
    mutating func close() {
        if fd >= 0 { try? fileSystem.close(fd) }
        fd = -1
        buffer.removeAll()
    }
}
