/// Opening a directory as it was left: restoring the journal backup, replaying the journal,
/// deleting half-finished edits and stray files, or emptying the directory when the journal is
/// unusable; and recreating a directory deleted underneath an open cache.
extension CacheState {
    /// Opens the directory as it was left. Called with the directory lock held.
    ///
    /// - Complexity: O(n) in the journal's lines and, when it sweeps, the directory's files.
    mutating func recover() throws(CacheError) -> RecoveryReport {
        var report = RecoveryReport()
        do {
            if try fileSystem.kind(of: directory.backupJournalPath) != nil {
                if try fileSystem.kind(of: directory.journalPath) != nil {
                    try fileSystem.unlink(directory.backupJournalPath)
                } else {
                    try fileSystem.rename(directory.backupJournalPath, to: directory.journalPath)
                    report.restoredBackup = true
                }
            }
        } catch {
            throw CacheError.ioFailure(error, operation: "open", path: directory.backupJournalPath)
        }

        let journalKind: FileKind?
        let closedCleanly: Bool
        do {
            journalKind = try fileSystem.kind(of: directory.journalPath)
            // Removed before anything else, so a crash in this session makes the next open sweep.
            closedCleanly = try fileSystem.kind(of: directory.cleanMarkerPath) == .regular
            try fileSystem.removeFileIfPresent(directory.cleanMarkerPath)
        } catch {
            throw CacheError.ioFailure(error, operation: "open", path: directory.journalPath)
        }
        guard let journalKind else {
            // A new cache, or one whose journal is gone: nothing on disk can be trusted.
            report.removedStrayFiles = sweep()
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
            bytes = try fileSystem.readWholeFile(directory.journalPath)
        } catch {
            throw CacheError.ioFailure(error, operation: "open", path: directory.journalPath)
        }
        let contents: Journal.Summary
        do {
            // Entries number at most the lines; a rebuilt journal has about one line per entry.
            table.reserveCapacity(Journal.lineCount(bytes))
            // Replayed as parsed: no array of records in between.
            contents = try Journal.parse(bytes, appVersion: journal.appVersion, valueCount: valueCount) {
                key, operation in
                replay(key, operation)
            }
        } catch {
            try wipe(reason: error.description, report: &report)
            return report
        }
        redundantOpCount = contents.recordCount - table.count
        report.droppedIncompleteEntries = dropIncompleteEntries()
        if !closedCleanly || report.droppedIncompleteEntries > 0 || contents.hasUnterminatedLine {
            report.removedStrayFiles = sweep()
            report.sweptDirectory = true
        }

        if contents.hasUnterminatedLine {
            // Never append after a torn line: rewrite the journal from what was read.
            try rebuildJournal()
            report.rebuiltJournal = true
        } else {
            try journal.openForAppending()
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
                if !storage.deleteEverything(of: entry.key) { hasUndeletedFiles = true }
                table.remove(at: index)
                dropped += 1
            } else {
                size += entry.totalLength
            }
        }
        return dropped
    }

    /// Deletes the storage's files that no readable entry refers to.
    private mutating func sweep() -> Int {
        let table = self.table
        return storage.sweep { key in
            guard let index = table.index(of: key) else { return false }
            return table[index].isReadable
        }
    }

    /// Empties the directory (keeping the lock) and starts a fresh journal.
    private mutating func wipe(reason: String, report: inout RecoveryReport) throws(CacheError) {
        directory.empty(keepingLock: true)
        table.removeAll()
        size = 0
        report.wipeReason = reason
        try rebuildJournal()
    }

    /// Recreates the directory after something deleted it underneath the cache (an OS cache
    /// cleaner). Every value file went with it: committed entries are forgotten, entries being
    /// edited continue as new ones. Does nothing if the directory exists.
    mutating func restoreMissingDirectory() throws(CacheError) {
        guard try !directory.exists() else { return }
        try directory.create()
        let newLock = try directory.acquireLock()
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
