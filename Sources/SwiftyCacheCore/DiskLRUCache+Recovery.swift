/// What opening the cache found and repaired.
public struct RecoveryReport: Sendable, Hashable {
    /// Why the directory was emptied (a journal header that did not match, or a corrupt line),
    /// or `nil` when the journal was read as is. The Java cache does the same, silently.
    public var wipeReason: String?
    /// Whether `journal.bkp` was promoted because `journal` was missing (a crash mid-rebuild).
    public var restoredBackup = false
    /// Entries whose edit never finished (a `DIRTY` line with no `CLEAN` or `REMOVE`); their
    /// files were deleted.
    public var droppedIncompleteEntries = 0
    /// Leftover `.tmp` files and value files no entry refers to, deleted on open.
    public var removedStrayFiles = 0
    /// Whether the directory was swept for stray files. It is skipped when the previous session
    /// ended with `close()`, which leaves none.
    public var sweptDirectory = false
    /// Whether the journal was rewritten on open (for example after a torn last line).
    public var rebuiltJournal = false

    /// Whether the directory was emptied because its journal was unusable.
    public var wasWiped: Bool { wipeReason != nil }

    public init() {}
}

extension CacheState {
    /// Opens the directory as it was left: restores the journal backup, replays the journal,
    /// deletes half-finished edits and stray files, or empties the directory if the journal is
    /// unusable. Called with the directory lock held.
    ///
    /// - Complexity: O(n) in the journal's lines and the directory's files.
    mutating func recover() throws(CacheError) -> RecoveryReport {
        let env = environment
        var report = RecoveryReport()
        do {
            if try fileSystem.kind(of: env.backupJournalPath) != nil {
                if try fileSystem.kind(of: env.journalPath) != nil {
                    try fileSystem.unlink(env.backupJournalPath)
                } else {
                    try fileSystem.rename(env.backupJournalPath, to: env.journalPath)
                    report.restoredBackup = true
                }
            }
        } catch {
            throw CacheError.io(error, operation: "open", path: env.backupJournalPath)
        }

        let journalKind: FileKind?
        let closedCleanly: Bool
        do {
            journalKind = try fileSystem.kind(of: env.journalPath)
            // Removed before anything else, so a crash in this session makes the next open sweep.
            closedCleanly = try fileSystem.kind(of: env.cleanMarkerPath) == .regular
            try env.removeFileIfPresent(env.cleanMarkerPath)
        } catch {
            throw CacheError.io(error, operation: "open", path: env.journalPath)
        }
        guard let journalKind else {
            // A new cache, or one whose journal is gone: nothing on disk can be trusted.
            report.removedStrayFiles = removeStrayFiles()
            report.sweptDirectory = true
            try rebuildJournal()
            return report
        }
        guard journalKind == .regular else {
            try wipe(reason: "the journal is not a regular file", report: &report)
            return report
        }

        let bytes: [UInt8]
        do {
            bytes = try env.readWholeFile(env.journalPath)
        } catch {
            throw CacheError.io(error, operation: "open", path: env.journalPath)
        }
        let contents: Journal.Summary
        do {
            // Entries number at most the lines; a rebuilt journal has about one line per entry.
            table.reserveCapacity(Journal.lineCount(bytes))
            // Replayed as parsed: no array of records in between.
            contents = try Journal.parse(bytes, appVersion: env.appVersion, valueCount: valueCount) { key, operation in
                replay(key, operation)
            }
        } catch {
            try wipe(reason: error.description, report: &report)
            return report
        }
        redundantOpCount = contents.recordCount - table.count
        report.droppedIncompleteEntries = dropIncompleteEntries()
        if !closedCleanly || report.droppedIncompleteEntries > 0 || contents.hasUnterminatedLine {
            report.removedStrayFiles = removeStrayFiles()
            report.sweptDirectory = true
        }

        if contents.hasUnterminatedLine {
            // Never append after a torn line: rewrite the journal from what was read.
            try rebuildJournal()
            report.rebuiltJournal = true
        } else {
            do {
                journalFD = try fileSystem.open(env.journalPath, flags: OpenFlags.append, mode: FileModes.file)
            } catch {
                throw CacheError.io(error, operation: "open", path: env.journalPath)
            }
        }
        return report
    }

    /// Applies one journal record to the index, as the Java cache does: every mention of a key
    /// except `REMOVE` makes it the most recently used.
    ///
    /// - Complexity: O(1): one hash lookup (a `CLEAN` or `DIRTY` of a new key inserts with the
    ///   same probe) and one in-place update.
    mutating func replay(_ key: String, _ operation: Journal.Operation) {
        switch operation {
        case .remove:
            if let index = table.index(of: key) { table.remove(at: index) }
        case .read:
            if let index = table.index(of: key) { table.touch(index) }
        case .dirty:
            let index = table.indexInsertingIfAbsent(key: key, valueCount: valueCount)
            table.touch(index)
            table.setEditor(index, UInt64.max)
        case .clean(let lengths):
            let index = table.indexInsertingIfAbsent(key: key, valueCount: valueCount)
            table.touch(index)
            table.setCommitted(index, lengths: lengths)
        }
    }

    /// Deletes entries left mid-edit, and sums the sizes of the others.
    private mutating func dropIncompleteEntries() -> Int {
        var dropped = 0
        size = 0
        // In storage order, not LRU order: sequential memory, and removal keeps indices.
        for index in table.indicesInStorageOrder {
            let entry = table[index]
            if entry.isBeingEdited {
                for slot in 0..<valueCount {
                    deleteFile(environment.cleanPath(entry.key, slot))
                    deleteFile(environment.dirtyPath(entry.key, slot))
                }
                table.remove(at: index)
                dropped += 1
            } else {
                size += entry.totalLength
            }
        }
        return dropped
    }

    /// Deletes `.tmp` files and value files (`key.N`) that no readable entry refers to.
    /// Other files are left alone.
    private mutating func removeStrayFiles() -> Int {
        guard let names = try? fileSystem.contentsOfDirectory(environment.directoryPath) else { return 0 }
        var removed = 0
        for name in names where isStray(name) {
            if (try? fileSystem.unlink(environment.path(name))) != nil { removed += 1 }
        }
        return removed
    }

    private func isStray(_ name: String) -> Bool {
        if name.hasSuffix(".tmp") { return true }
        let utf8 = name.utf8
        guard let dot = utf8.lastIndex(of: UInt8(ascii: ".")) else { return false }
        let keyPart = name[..<dot]
        let slotPart = utf8[utf8.index(after: dot)...]
        guard !slotPart.isEmpty, slotPart.count <= 9,
            slotPart.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }),
            Journal.isValidKey(String(keyPart))
        else { return false }
        let slot = slotPart.reduce(0) { $0 * 10 + Int($1 - UInt8(ascii: "0")) }
        guard let index = table.index(of: String(keyPart)), table[index].isReadable else { return true }
        return slot >= valueCount
    }

    /// Empties the directory (keeping the lock) and starts a fresh journal.
    private mutating func wipe(reason: String, report: inout RecoveryReport) throws(CacheError) {
        environment.emptyDirectory(keepingLock: true)
        table.removeAll()
        size = 0
        report.wipeReason = reason
        try rebuildJournal()
    }

    /// Recreates the directory after something deleted it underneath the cache (an OS cache
    /// cleaner). Every value file went with it: committed entries are forgotten, entries being
    /// edited continue as new ones.
    mutating func restoreMissingDirectory() throws(CacheError) {
        let kind: FileKind?
        do {
            kind = try fileSystem.kind(of: environment.directoryPath)
        } catch {
            throw CacheError.io(error, operation: "restore directory", path: environment.directoryPath)
        }
        guard kind == nil else { return }
        try environment.createDirectory()
        let newLock = try environment.acquireLock()
        lock?.release(using: fileSystem)
        lock = newLock
        for index in table.indicesInLRUOrder {
            if table[index].isBeingEdited {
                table.setReadable(index, false)
                table.setLengths(index, Array(repeating: 0, count: valueCount))
            } else {
                table.remove(at: index)
            }
        }
        size = 0
        try rebuildJournal()
    }
}
