/// Opening a directory as it was left: restoring the journal backup, replaying the journal,
/// deleting half-finished edits and stray files, or deleting the cache's files when the journal
/// is unusable; and recreating a directory deleted underneath an open cache.
///
/// Only files the cache created are ever deleted: the journal's own names, and value files
/// whose key a journal line names. Everything else is listed in the report and left alone.
extension CacheState {
    /// Opens the directory for a new cache: a cache that writes creates it and takes its lock
    /// first; a read-only one creates nothing, not even the lock file.
    ///
    /// - Throws: The errors of ``recover()`` and ``recoverReadOnly()``;
    ///   ``CacheError/Code/invalidConfiguration`` for a read-only cache of a missing directory.
    mutating func open(readOnly: Bool, shared: Bool = false) throws(CacheError) -> RecoveryReport {
        let report: RecoveryReport
        if shared {
            report = try openShared()
        } else if readOnly {
            guard try directory.exists() else {
                throw CacheError.invalidConfiguration(
                    "a read-only cache needs an existing directory", path: directory.path, operation: .open)
            }
            report = try recoverReadOnly()
        } else {
            try directory.create()
            lock = try directory.acquireLock()
            do {
                report = try recover()
            } catch {
                closeAsCrash()
                throw error
            }
        }
        beginLogSession()
        for trash in takePendingDeletions() { try? fileSystem.removeFileIfPresent(trash) }
        checkInvariants()
        return report
    }

    /// Opens the directory as it was left. Called with the directory lock held.
    ///
    /// - Throws: ``CacheError/Code/notACacheDirectory`` when `journal` is not a DiskLruCache
    ///   journal (nothing is touched then), ``CacheError/Code/ioFailure``.
    /// - Complexity: O(n) in the journal's lines and, when it sweeps, the directory's files.
    ///   Memory: the index, plus one line and one 64 KiB chunk.
    mutating func recover() throws(CacheError) -> RecoveryReport {
        var report = RecoveryReport()
        try promoteBackupJournal(&report)
        let journalStatus: FileStatus?
        do {
            journalStatus = try fileSystem.status(atPath: directory.journalPath)
        } catch {
            throw CacheError.ioFailure(error, operation: .open, path: directory.journalPath)
        }
        guard let journalStatus else {
            // A new cache, or one whose journal is gone: no file here is provably the cache's.
            removeCleanMarker()
            sweep(knownKeys: [], wipe: false, report: &report)
            storage.recover(table: table, wipe: false, closedCleanly: false)
            try rebuildJournal()
            return report
        }
        guard journalStatus.kind == .regular else {
            throw CacheError.notACacheDirectory(path: directory.journalPath, reason: "it is not a regular file")
        }
        if try loadSavedIndex(journalStatus) {
            report.loadedSavedIndex = true
            return report
        }
        var removedKeys: Set<String> = []
        var recent: RecentCommits? = isReadOnly ? nil : RecentCommits()
        let summary = try replayJournal(size: journalStatus.size, removedKeys: &removedKeys, recent: &recent)
        journal.noteReplayed(
            textLines: summary.recordCount - summary.blockRecordCount, blockRecords: summary.blockRecordCount)
        try refuseForeignJournal(summary)
        try settleReplay(
            summary, journalStatus: journalStatus, recent: recent, removedKeys: &removedKeys, report: &report)
        return report
    }

    /// Throws when the replayed journal is not a DiskLruCache journal, or one of the other
    /// storage; the index is emptied first.
    private mutating func refuseForeignJournal(_ summary: JournalParser.Summary) throws(CacheError) {
        if summary.firstLine == .foreign {
            table.removeAll()
            throw CacheError.notACacheDirectory(
                path: directory.journalPath, reason: "its first line is not \(Journal.magic)")
        }
        if summary.firstLine == .magic || summary.firstLine == .packedMagic,
            (summary.firstLine == .packedMagic) != replayFormat.storesLocations
        {
            table.removeAll()
            let found: Journal.Format = summary.firstLine == .packedMagic ? .packed(inlineLimit: 0) : .files
            throw CacheError.storageMismatch(
                path: directory.journalPath, found: found.name, requested: replayFormat.name)
        }
    }

    /// What follows a replay: a wipe for a corrupt journal; otherwise dropping damaged and
    /// interrupted entries, the sweep when the last session did not close cleanly, the
    /// storage's own recovery, and the journal rewritten or opened for appending.
    private mutating func settleReplay(
        _ summary: JournalParser.Summary, journalStatus: FileStatus, recent: RecentCommits?,
        removedKeys: inout Set<String>, report: inout RecoveryReport
    ) throws(CacheError) {
        let closedCleanly = directory.cleanMarkerMatches(journalStatus)
        // Removed before anything else, so a crash in this session makes the next open sweep.
        removeCleanMarker()
        if let corruption = summary.corruption {
            let known = removedKeys.union(summary.keysAfterCorruption)
            try wipe(reason: corruption.description, knownKeys: known, report: &report)
            return
        }
        let damaged = dropEntriesNamed(byDamagedLines: summary.damagedLines, removedKeys: &removedKeys)
        report.damagedJournalLines = summary.damagedLines.count
        report.droppedDamagedEntries = damaged
        redundantOpCount = max(0, summary.recordCount - table.count)
        let dropped = dropIncompleteEntries(removedKeys: &removedKeys)
        // Commits whose lines a crash lost, read back from the segments.
        let logged = closedCleanly ? 0 : applyLog(removedKeys: &removedKeys)
        report.recoveredLoggedChanges = logged
        // Files a power cut may have left of their length but unwritten (CacheState+UnwrittenValues).
        var unwritten = 0
        if !closedCleanly, let recent {
            unwritten = dropValuesLeftUnwritten(
                recent, journalModified: journalStatus.modificationSeconds, removedKeys: &removedKeys)
        }
        report.droppedUnwrittenValues = unwritten
        guard let total = committedTotal() else {
            try wipe(reason: "the journal's lengths add up past Int.max", knownKeys: removedKeys, report: &report)
            return
        }
        size = total
        report.droppedIncompleteEntries = dropped
        if !closedCleanly || dropped > 0 || damaged > 0 || unwritten > 0 || summary.hasUnterminatedLine {
            sweep(knownKeys: removedKeys, wipe: false, report: &report)
        }
        let appendsCleanly =
            closedCleanly && dropped == 0 && summary.damagedLines.isEmpty && !summary.hasUnterminatedLine
            && summary.joinedLineCount == 0
        storage.recover(table: table, wipe: false, closedCleanly: appendsCleanly)
        if replayFormat != journal.format {
            // A file-storage journal, replayed: rewritten in packed format, every entry's values
            // staying the files they are (location 0) until it is next written.
            try rebuildJournal()
            report.rebuiltJournal = true
            report.migratedFromFileStorage = true
        } else if summary.hasUnterminatedLine || !summary.damagedLines.isEmpty || summary.joinedLineCount > 0
            || logged > 0 || unwritten > 0
        {
            // Never append after a torn line, nor keep damaged ones or torn ones joined to the
            // next (earlier releases read those as damage), nor leave the changes read from the
            // log unjournaled, nor name values dropped as unwritten: rewrite the journal from
            // what was read.
            try rebuildJournal()
            report.rebuiltJournal = true
        } else {
            try journal.openForAppending()
        }
    }

    /// After a clean close: loads the ``SavedIndex`` the marker holds instead of replaying
    /// the journal it vouches for, and opens the journal for appending. `false` (nothing done)
    /// when there is no usable snapshot: then the journal is replayed.
    ///
    /// - Complexity: O(entries), reading the saved index once; no journal line is parsed.
    private mutating func loadSavedIndex(_ journalStatus: FileStatus) throws(CacheError) -> Bool {
        guard replayFormat == journal.format else { return false }
        let appVersion = journal.appVersion
        let storesLocations = journal.format.storesLocations
        let saved = directory.readCleanMarker(for: journalStatus) { snapshot in
            SavedIndex.load(
                snapshot, appVersion: appVersion, valueCount: valueCount, storesLocations: storesLocations)
        }
        guard let (loadedTable, loaded) = saved else { return false }
        table = loadedTable
        // Removed before anything else, so a crash in this session makes the next open replay.
        removeCleanMarker()
        size = loaded.totalLength
        redundantOpCount = loaded.redundantOpCount
        storage.recover(table: table, wipe: false, closedCleanly: true)
        try journal.openForAppending()
        return true
    }

    /// Promotes `journal.bkp` when `journal` is missing (a crash in the middle of a rebuild),
    /// or deletes it when both exist.
    private mutating func promoteBackupJournal(_ report: inout RecoveryReport) throws(CacheError) {
        do {
            guard try fileSystem.kind(of: directory.backupJournalPath) == .regular else { return }
            if try fileSystem.kind(of: directory.journalPath) != nil {
                try fileSystem.unlink(directory.backupJournalPath)
            } else {
                try fileSystem.rename(directory.backupJournalPath, to: directory.journalPath)
                report.restoredBackup = true
            }
        } catch {
            throw CacheError.ioFailure(error, operation: .open, path: directory.backupJournalPath)
        }
    }

    private mutating func removeCleanMarker() {
        deleteFile(directory.cleanMarkerPath)
    }

    /// Deletes the files of entries left mid-edit and drops them.
    private mutating func dropIncompleteEntries(removedKeys: inout Set<String>) -> Int {
        var dropped = 0
        // In storage order, not LRU order: sequential memory, and removal keeps indices.
        for index in table.indicesBeingEdited {
            let key = table.key(at: index)
            if isReadOnly {
                table.remove(at: index)
            } else {
                if !storage.deleteEverything(of: key) { noteUndeletedFiles(of: key) }
                table.remove(at: index)
                removedKeys.insert(key)
            }
            dropped += 1
        }
        return dropped
    }

    /// The committed bytes of all entries; `nil` if they add up past `Int.max` (a hostile or
    /// damaged journal).
    func committedTotal() -> Int? {
        var total = 0
        for index in table.indicesInStorageOrder {
            guard let length = table.totalLength(index) else { return nil }
            let (sum, overflow) = total.addingReportingOverflow(length)
            guard !overflow else { return nil }
            total = sum
        }
        return total
    }

    /// Deletes the cache's stray files: leftover temporary journals, staged values, and values
    /// of keys that are not live or slots past `valueCount`, for keys the journal names (live
    /// ones and `knownKeys`). With `wipe`, every value file of those keys and the journals go
    /// too. Files of other names are listed in the report and left alone.
    mutating func sweep(knownKeys: Set<String>, wipe: Bool, report: inout RecoveryReport) {
        report.sweptDirectory = true
        guard let names = try? fileSystem.contentsOfDirectory(directory.path) else { return }
        var unknown: [String] = []
        for name in names {
            let path = directory.path(name)
            let file = CacheFileName(name)
            let removes: Bool
            switch file {
            case .segment where storage.sharesFiles:
                // The storage deletes those that hold no live value (see `recover`).
                removes = wipe && storage.isOwnSharedFile(atPath: path)
            case .temporaryJournal, .journalTrash, .newSegment, .temporaryPins:
                removes = true
            case .journal, .backupJournal, .spaceReserve, .pins:
                removes = wipe
            case .lock, .operationLock, .cleanMarker:
                removes = false
            case .value(let key, let slot), .stagedValue(let key, let slot):
                let isStaged = file == .stagedValue(key: key, slot: slot)
                let sweeps = sweepsValueFile(key: key, slot: slot, isStaged: isStaged, known: knownKeys, wipe: wipe)
                guard let sweeps else {
                    unknown.append(name)
                    continue
                }
                removes = sweeps
            case .segment, nil:
                unknown.append(name)
                continue
            }
            if removes, (try? fileSystem.unlink(path)) != nil { report.removedStrayFiles += 1 }
        }
        report.unknownFiles = unknown.sorted()
    }

    /// Whether the sweep deletes a value file of `key`; `nil` when the file is not the cache's
    /// (no journal line names its key: it is left, and the key refused to writes).
    private mutating func sweepsValueFile(
        key: String, slot: Int, isStaged: Bool, known knownKeys: Set<String>, wipe: Bool
    ) -> Bool? {
        let index = table.index(of: key)
        guard index != nil || knownKeys.contains(key) else {
            foreignKeys.insert(key)
            return nil
        }
        let isLive = index.map { table[$0].isReadable } ?? false
        // A live key's file that its values no longer use (packed: the slot is in a record).
        let isStale =
            isLive && slot < valueCount && !isStaged
            && index.map { !storage.isFileSlot(slot, location: table[$0].location, lengths: table[$0].lengths) }
                ?? false
        return wipe || isStaged || !isLive || slot >= valueCount || isStale
    }

    /// Deletes the cache's files (the journals, and the values of `knownKeys` and of the keys in
    /// the index) and starts a fresh journal. Files the cache did not create stay, and are
    /// listed in the report. The index is looked up in place during the sweep (no copy of its
    /// keys), then emptied.
    private mutating func wipe(reason: String, knownKeys: Set<String>, report: inout RecoveryReport) throws(CacheError)
    {
        report.wipeReason = reason
        sweep(knownKeys: knownKeys, wipe: true, report: &report)
        table.removeAll()
        size = 0
        dropAllPins()
        storage.recover(table: table, wipe: true, closedCleanly: false)
        try rebuildJournal()
    }

    /// Deletes every file of the cache that is closed: the journals, the clean marker, the lock
    /// and the values of the keys it knows, then the directory if nothing else is left in it.
    /// Returns the names of the files it left.
    mutating func deleteOwnFiles() -> [String] {
        var report = RecoveryReport()
        // The sweep looks keys up in the index itself.
        sweep(knownKeys: undeletedKeys, wipe: true, report: &report)
        deleteFile(directory.cleanMarkerPath)
        deleteFile(directory.lockPath)
        deleteFile(directory.operationLockPath)
        if report.unknownFiles.isEmpty { try? fileSystem.rmdir(directory.path) }
        return report.unknownFiles
    }

    /// Recreates the directory after something deleted it underneath the cache (an OS cache
    /// cleaner). Every value file went with it: committed entries are forgotten, entries being
    /// edited continue as new ones. Does nothing if the directory exists.
    ///
    /// The one place a vanished directory is dealt with, in both storages. A storage that finds
    /// it gone throws ``CacheError/directoryVanished(_:operation:path:key:file:line:)`` (file
    /// storage while staging or renaming, packed storage while appending a record); the call
    /// that met it comes here, then tries once more.
    ///
    /// - Returns: Whether the directory was missing and is now recreated.
    @discardableResult
    mutating func restoreVanishedDirectory() throws(CacheError) -> Bool {
        guard try !directory.exists() else { return false }
        if isShared {
            // The others' locks went with it: which cache recreates it, and with whose locks,
            // no cache can tell. Each throws until it is opened again.
            var error = CacheError.ioFailure(
                SystemCallFailure(call: "stat", errno: Errno.noEntry), operation: .commit, path: directory.path)
            error.message += "; the cache directory was deleted while several processes shared it: open it again"
            throw error
        }
        try directory.create()
        let newLock = try directory.acquireLock()
        lock?.release(using: fileSystem)
        lock = newLock
        // Every entry went with the directory.
        changes.record(key: nil, kind: .cleared)
        for index in table.indicesInLRUOrder {
            if table[index].isBeingEdited {
                table.setReadable(index, false)
                table.setLengths(index, SlotLengths(repeating: 0, count: valueCount))
            } else {
                table.remove(at: index)
            }
        }
        size = 0
        dropAllPins()
        storage.recover(table: table, wipe: true, closedCleanly: false)
        try rebuildJournal()
        return true
    }
}
