/// Everything the cache-wide lock guards: the index, the sizes, the journal writer and the
/// counters. Its mutating methods hold the decisions; `DiskLRUCache` only calls them under
/// its lock (`LockedState`) and does the value-file I/O that can run outside it.
struct CacheState {
    let environment: CacheEnvironment
    var table = EntryTable()
    /// Sum of the committed lengths of readable entries.
    var size = 0
    var maxSize: Int
    var journalFD: Int32 = -1
    /// Journal lines not yet written to the file.
    var journalBuffer: [UInt8] = []
    var lock: DirectoryLock?
    var redundantOpCount = 0
    var nextSequenceNumber: UInt64 = 1
    var nextEditorID: UInt64 = 1
    var isClosed = false
    /// Set when a journal write or rebuild failed; cleared by a successful rebuild.
    var journalFailure: CacheError?
    var isCleanupScheduled = false
    var statistics = CacheStatistics()
    /// Files renamed out of the way under the lock, to unlink after it is released: on this
    /// kind of file system an unlink can wait for the device, and nothing should wait behind it.
    var pendingDeletions: [String] = []
    /// Set when a file could not be deleted: then `close()` leaves no clean marker, and the
    /// next open sweeps the directory.
    var hasUndeletedFiles = false
    private var trashCounter = 0

    /// READ lines may stay buffered up to this many bytes.
    static let readBufferLimit = 8 << 10

    init(environment: CacheEnvironment, maxSize: Int) {
        self.environment = environment
        self.maxSize = maxSize
    }

    var fileSystem: any FileSystem { environment.fileSystem }
    var valueCount: Int { environment.valueCount }

    /// The Java rule: rebuild when redundant lines reach 2000 and outnumber the entries.
    var isJournalRebuildRequired: Bool {
        redundantOpCount >= Journal.rebuildThreshold && redundantOpCount >= table.count
    }

    var needsCleanup: Bool { size > maxSize || isJournalRebuildRequired || journalFailure != nil }

    /// Returns `true` when the caller must dispatch a background cleanup (once per batch).
    mutating func claimCleanup() -> Bool {
        guard !isClosed, needsCleanup, !isCleanupScheduled else { return false }
        isCleanupScheduled = true
        return true
    }

    // MARK: Journal

    mutating func appendJournal(_ operation: Journal.Operation, key: String) {
        // While the journal is broken nothing is appended: the rebuild that repairs it writes
        // the whole index, and a line must never follow a torn one.
        guard journalFailure == nil else { return }
        Journal.appendLine(operation, key: key, to: &journalBuffer)
    }

    /// Writes buffered lines to the OS (not to stable storage; see `syncJournal`).
    mutating func flushJournal(operation: String, key: String? = nil) throws(CacheError) {
        if let journalFailure { throw Self.unavailable(journalFailure, operation: operation, key: key) }
        guard !journalBuffer.isEmpty else { return }
        do {
            try environment.writeAll(journalFD, journalBuffer)
            journalBuffer.removeAll(keepingCapacity: true)
        } catch {
            journalBuffer.removeAll(keepingCapacity: true)
            let failure = CacheError.io(error, operation: operation, path: environment.journalPath, key: key)
            journalFailure = failure
            throw failure
        }
    }

    /// Flushes READ lines once enough have piled up; errors only mark the journal broken.
    mutating func flushReadsIfLarge() {
        if journalBuffer.count >= Self.readBufferLimit { try? flushJournal(operation: "read") }
    }

    /// With `syncsWrites`, forces the journal and the directory to stable storage.
    mutating func syncIfDurable(operation: String, key: String?) throws(CacheError) {
        guard environment.syncsWrites else { return }
        do {
            try fileSystem.fsync(journalFD)
            try environment.syncDirectory()
        } catch {
            throw CacheError.io(error, operation: operation, path: environment.directoryPath, key: key)
        }
    }

    static func unavailable(_ failure: CacheError, operation: String, key: String?) -> CacheError {
        CacheError(
            code: .journalUnavailable,
            message: "an earlier journal write failed and the journal could not be rebuilt yet; edits are refused until it is, reads still work",
            key: key, path: failure.path, operation: operation, cause: failure)
    }

    /// Rebuilds the journal if an earlier write failed; throws if it still cannot be written.
    mutating func ensureJournalWritable(operation: String, key: String?) throws(CacheError) {
        guard let failure = journalFailure else { return }
        do {
            try rebuildJournal()
        } catch {
            throw Self.unavailable(error.cause as? CacheError ?? failure, operation: operation, key: key)
        }
    }

    /// Writes a compact journal of the live index to `journal.tmp` and swaps it in, keeping the
    /// old one as `journal.bkp` during the swap.
    ///
    /// - Complexity: O(n) in the number of entries; run when redundant lines outnumber them.
    mutating func rebuildJournal() throws(CacheError) {
        var bytes = Array(Journal.header(appVersion: environment.appVersion, valueCount: valueCount).utf8)
        bytes.reserveCapacity(bytes.count + table.count * 48)
        var cursor = table.eldest
        while cursor != -1 {
            let entry = table[cursor]
            if entry.isBeingEdited && entry.isDirtyJournaled {
                Journal.appendLine(.dirty, key: entry.key, to: &bytes)
            } else if entry.isReadable {
                Journal.appendCleanLine(key: entry.key, lengths: entry.lengths, to: &bytes)
            }
            cursor = table.indexAfter(cursor)
        }
        let env = environment
        var failedPath = env.temporaryJournalPath
        do {
            // A journal.tmp left by a crash, or planted as a link, is replaced, never followed.
            try env.removeFileIfPresent(env.temporaryJournalPath)
            let fd = try fileSystem.open(env.temporaryJournalPath, flags: OpenFlags.createTruncate, mode: FileModes.file)
            do {
                try env.writeAll(fd, bytes)
                if env.syncsWrites { try fileSystem.fsync(fd) }
            } catch {
                try? fileSystem.close(fd)
                try? fileSystem.unlink(env.temporaryJournalPath)
                throw error
            }
            // close() releases the descriptor even when it reports an error: never close twice.
            do {
                try fileSystem.close(fd)
            } catch {
                try? fileSystem.unlink(env.temporaryJournalPath)
                throw error
            }
            failedPath = env.journalPath
            if try fileSystem.kind(of: env.journalPath) != nil {
                try fileSystem.rename(env.journalPath, to: env.backupJournalPath)
            }
            try fileSystem.rename(env.temporaryJournalPath, to: env.journalPath)
            // A leftover backup is harmless: opening deletes it when `journal` exists.
            moveToTrash(env.backupJournalPath)
            let newFD = try fileSystem.open(env.journalPath, flags: OpenFlags.append, mode: FileModes.file)
            if journalFD >= 0 { try? fileSystem.close(journalFD) }
            journalFD = newFD
            if env.syncsWrites { try env.syncDirectory() }
        } catch {
            let failure = CacheError.io(error, operation: "rebuild journal", path: failedPath)
            journalFailure = failure
            throw failure
        }
        journalBuffer.removeAll(keepingCapacity: true)
        redundantOpCount = 0
        journalFailure = nil
    }

    // MARK: Entries

    /// Journals `REMOVE` for the entries, then deletes their files and forgets them. If the
    /// journal cannot be written, nothing is removed.
    mutating func removeEntries(_ indices: [Int], operation: String) throws(CacheError) {
        guard !indices.isEmpty else { return }
        for index in indices { appendJournal(.remove, key: table[index].key) }
        try flushJournal(operation: operation, key: indices.count == 1 ? table[indices[0]].key : nil)
        for index in indices { forgetEntryDeletingFiles(index) }
        redundantOpCount += indices.count
    }

    /// Renames `path` to a unique `….N.tmp` name and queues it for unlinking after the lock.
    /// The trash name can never be a key's file, so a key recreated meanwhile is safe, and a
    /// crash before the unlink leaves only a `.tmp` file, which opening sweeps away.
    mutating func moveToTrash(_ path: String) {
        trashCounter += 1
        let trash = path + "." + String(trashCounter) + ".tmp"
        do {
            try fileSystem.rename(path, to: trash)
            pendingDeletions.append(trash)
        } catch where error.errno == Errno.noEntry {
            return
        } catch {
            deleteFile(path)
        }
    }

    /// Deletes a file, best effort: a failure is remembered so the next open sweeps.
    mutating func deleteFile(_ path: String) {
        bestEffort { env throws(SystemCallError) in try env.removeFileIfPresent(path) }
    }

    /// Deletes a value file (`key.slot`, or `key.slot.tmp` when `temporary`), best effort, like
    /// ``deleteFile(_:)``, without building a path string.
    mutating func deleteValueFile(_ key: String, _ slot: Int, temporary: Bool) {
        bestEffort { env throws(SystemCallError) in try env.removeValueFileIfPresent(key, slot, temporary: temporary) }
    }

    private mutating func bestEffort(_ delete: (CacheEnvironment) throws(SystemCallError) -> Void) {
        do {
            try delete(environment)
        } catch {
            hasUndeletedFiles = true
        }
    }

    /// The queued trash, emptied.
    mutating func takePendingDeletions() -> [String] {
        defer { pendingDeletions.removeAll() }
        return pendingDeletions
    }

    /// Deletes an entry's committed value files and drops it from the index, without journaling.
    ///
    /// An entry being edited keeps its record, so that its editor goes on alone, as if creating
    /// the entry anew (it must write every slot to commit): a second editor can never start on
    /// the key and share its temporary files.
    mutating func forgetEntryDeletingFiles(_ index: Int) {
        let entry = table[index]
        if entry.isReadable { size -= entry.totalLength }
        // Best effort: a file that cannot be deleted now is swept as unreferenced on open.
        for slot in 0..<valueCount { deleteValueFile(entry.key, slot, temporary: false) }
        if entry.isBeingEdited {
            table.setReadable(index, false)
            table.setLengths(index, Array(repeating: 0, count: valueCount))
        } else {
            table.remove(at: index)
        }
    }

    /// Drops an entry whose files are missing or damaged: a miss, never an error.
    mutating func dropDamagedEntry(_ index: Int) {
        let key = table[index].key
        appendJournal(.remove, key: key)
        forgetEntryDeletingFiles(index)
        redundantOpCount += 1
        try? flushJournal(operation: "drop damaged entry", key: key)
    }

    /// Evicts least recently used entries until `size <= maxSize`, skipping entries being edited.
    ///
    /// - Complexity: O(evicted entries + entries being edited).
    mutating func trimToSize() throws(CacheError) {
        guard size > maxSize else { return }
        let victims = evictionVictims(limit: Int.max, sparing: -1)
        // Unlinked under the lock: deferring them costs a rename each, and on Linux creates,
        // renames and unlinks in one directory serialize in the kernel anyway.
        try removeEntries(victims, operation: "evict")
        statistics.evictionCount += victims.count
    }

    /// The least recently used entries to evict, eldest first, until `size <= maxSize` or
    /// `limit` of them: committed entries not being edited, other than the one at `sparing`.
    ///
    /// - Complexity: O(victims + entries being edited that the walk passes).
    func evictionVictims(limit: Int, sparing: Int) -> [Int] {
        guard size > maxSize else { return [] }
        var victims: [Int] = []
        var projected = size
        var cursor = table.eldest
        while projected > maxSize && cursor != -1 && victims.count < limit {
            let entry = table[cursor]
            if entry.isReadable && !entry.isBeingEdited && cursor != sparing {
                victims.append(cursor)
                projected -= entry.totalLength
            }
            cursor = table.indexAfter(cursor)
        }
        return victims
    }

    /// Evictions a commit makes itself, journaled in the same write as its `CLEAN` line, so that
    /// a steady stream of writes to a full cache needs no hand-off to the cleanup thread. The
    /// cleanup thread takes what is left beyond this many (after a large value or a lowered
    /// `maxSize`).
    static let inlineEvictionLimit = 16

    /// Ends an edit without publishing it: deletes its temporary files and journals the
    /// entry's state (`CLEAN` with the old lengths, or `REMOVE` for a new entry).
    mutating func abortEdit(at index: Int, written: [Int?]) {
        let key = table[index].key
        deleteTemporaries(key: key, written: written)
        table.setEditor(index, 0)
        guard table[index].isDirtyJournaled else {
            // A one-shot write that never reached the journal: nothing to undo there.
            if !table[index].isReadable { table.remove(at: index) }
            return
        }
        table.setDirtyJournaled(index, false)
        redundantOpCount += 1
        if table[index].isReadable {
            // Replay treats the CLEAN line as a use; so does memory, so both orders agree.
            table.touch(index)
            appendJournal(.clean(lengths: table[index].lengths), key: key)
        } else {
            table.remove(at: index)
            appendJournal(.remove, key: key)
        }
        try? flushJournal(operation: "abort", key: key)
    }

    mutating func deleteTemporaries(key: String, written: [Int?]) {
        for slot in written.indices where written[slot] != nil {
            deleteValueFile(key, slot, temporary: true)
        }
    }
}

/// How often the cache was used, since it was opened.
public struct CacheStatistics: Sendable, Hashable {
    /// Reads that found a readable entry.
    public var hitCount = 0
    /// Reads that found nothing (including entries dropped because their files were gone).
    public var missCount = 0
    /// Committed edits.
    public var writeCount = 0
    /// Entries evicted to stay under `maxSize`.
    public var evictionCount = 0
    /// Entries removed by `remove(_:)` or `evictAll()`.
    public var removeCount = 0

    public init() {}
}
