import Dispatch

/// Everything the cache-wide lock guards: the index, the sizes, the journal writer and the
/// counters.
///
/// Its mutating methods hold the decisions: each public operation of ``DiskLRUCache`` takes
/// the lock, calls one of them, and releases the lock. Value bytes go through ``storage``;
/// the journal through ``journal``. The edit transaction is in `CacheState+Edit.swift`,
/// eviction in `CacheState+Eviction.swift`, opening in `CacheState+Recovery.swift` and the
/// consistency checks in `CacheState+Invariants.swift`.
struct CacheState {
    let directory: CacheDirectory
    let storage: any ValueStorage
    var journal: JournalWriter
    /// Whether a flush of buffered `READ` lines is scheduled on the I/O pool.
    var isReadFlushClaimed = false
    var table = EntryTable()
    /// Sum of the committed lengths of readable entries.
    var size = 0
    var maxSize: Int
    var lock: DirectoryLock?
    /// Journal lines that no longer describe a live entry; see ``isJournalRebuildRequired``.
    var redundantOpCount = 0
    var nextSequenceNumber: UInt64 = 1
    var nextEditorID: UInt64 = 1
    var isClosed = false
    var isCleanupScheduled = false
    var statistics = CacheStatistics()
    /// Files renamed out of the way under the lock, to unlink after it is released: on this
    /// kind of file system an unlink can wait for the device, and nothing should wait behind it.
    var pendingDeletions: [String] = []
    /// Counts the batches of trash taken by operations and not yet unlinked (they unlink it
    /// after the lock is released): `close()` waits for them before it gives up the directory,
    /// so that nothing of this cache touches the directory once `close()` has returned.
    let trashBeingUnlinked = DispatchGroup()
    /// Set when a file could not be deleted: then `close()` leaves no clean marker, and the
    /// next open sweeps the directory.
    var hasUndeletedFiles = false
    /// Keys with value files that could not be deleted. A journal rebuild keeps a `REMOVE` line
    /// for each key no longer in the index, so that the next open still knows the files are
    /// the cache's to sweep.
    var undeletedKeys: Set<String> = []
    private var trashCounter = 0
    /// Opened with ``DiskLRUCache/Options/readOnly``: nothing is ever written, created or
    /// deleted, and each read is checked against what the writer appended since (`readOnlyView`).
    let isReadOnly: Bool
    /// For a read-only cache: the journal as replayed, and what changed in it since.
    var readOnlyView: ReadOnlyView?
    /// Keys whose value file name is taken by a file the cache did not create; edits of them are
    /// refused, so that such a file is never replaced.
    var foreignKeys: Set<String> = []
    /// The format the journal on disk is read in: the journal's own, except when opening
    /// migrates a file-storage directory to packed storage.
    var replayFormat: Journal.Format

    init(
        directory: CacheDirectory, storage: any ValueStorage, journal: JournalWriter, maxSize: Int,
        isReadOnly: Bool = false
    ) {
        self.directory = directory
        self.storage = storage
        self.journal = journal
        self.maxSize = maxSize
        self.isReadOnly = isReadOnly
        self.replayFormat = journal.format
    }

    var fileSystem: any FileSystem { directory.fileSystem }
    var valueCount: Int { storage.valueCount }

    /// The Java rule: rebuild when redundant lines reach 2000 and outnumber the entries.
    var isJournalRebuildRequired: Bool {
        redundantOpCount >= Journal.rebuildThreshold && redundantOpCount >= table.count
    }

    var needsCleanup: Bool {
        size > maxSize || isJournalRebuildRequired || journal.failure != nil || isCompactionDue
    }

    /// Whether packed segments hold enough garbage for a compaction pass, as of the last write
    /// or removal (reads make no garbage, so they never ask the storage).
    var isCompactionDue = false

    /// Notes whether the writes just made call for compaction.
    mutating func noteGarbage() {
        isCompactionDue = storage.needsCompaction
    }

    /// Returns `true` when the caller must dispatch a background cleanup (once per batch).
    mutating func claimCleanup() -> Bool {
        guard !isClosed, !isReadOnly, needsCleanup, !isCleanupScheduled else { return false }
        isCleanupScheduled = true
        return true
    }

    // MARK: Journal

    /// Rebuilds the journal if an earlier write failed; throws if it still cannot be written.
    mutating func ensureJournalWritable(operation: String, key: String?) throws(CacheError) {
        journal.adoptDeferredFailure()
        guard let failure = journal.failure else { return }
        do {
            try rebuildJournal()
        } catch {
            throw CacheError.journalUnavailable(error.cause as? CacheError ?? failure, operation: operation, key: key)
        }
    }

    /// Writes a compact journal of the live index and swaps it in (see
    /// ``JournalWriter/replace(with:)``): `CLEAN` for each committed entry and `DIRTY` for each
    /// one whose editor already journaled it, in LRU order. All of it under the lock: for
    /// repairs, `flush()` and recovery; background cleanup writes its rebuilds outside the lock
    /// (``beginJournalRebuild()``).
    ///
    /// - Complexity: O(n) in the number of entries; run when redundant lines outnumber them.
    mutating func rebuildJournal() throws(CacheError) {
        // The records the new journal names are durable before it replaces the old one.
        try storage.makeDurable(operation: "rebuild journal")
        try journal.replace(with: compactJournal().bytes())
        // A leftover backup is harmless: opening deletes it when `journal` exists.
        moveToTrash(directory.backupJournalPath)
        redundantOpCount = 0
    }

    /// The live index as a compact journal would hold it. Copying it is O(1) (copy on write);
    /// the first change to the index afterwards copies the table once, O(n), so a rebuild
    /// costs the operations that triggered it O(1) amortized each.
    func compactJournal() -> CompactJournal {
        CompactJournal(
            header: journal.header(), table: table, removedKeys: undeletedKeys.filter { table.index(of: $0) == nil },
            format: journal.format)
    }

    /// Begins a rebuild of the journal whose bulk is written outside the lock, when one is
    /// due: see ``JournalWriter/beginRebuild()``. The caller writes it without the lock
    /// (``JournalRebuild/write(with:)``), then calls ``finishJournalRebuild(_:written:)``.
    mutating func beginJournalRebuild() -> JournalRebuild? {
        guard isJournalRebuildRequired, !isClosed, !isReadOnly, let pending = journal.beginRebuild() else {
            return nil
        }
        return JournalRebuild(
            pending: pending, journal: compactJournal(), redundantOpCount: redundantOpCount, storage: storage)
    }

    /// Ends a rebuild begun by ``beginJournalRebuild()``: the lines journaled meanwhile are
    /// appended and the new journal swapped in, or the rebuild is dropped (see
    /// ``JournalWriter/finishRebuild(_:written:)``).
    mutating func finishJournalRebuild(_ rebuild: JournalRebuild, written: Bool) {
        guard (try? journal.finishRebuild(rebuild.pending, written: written)) == true else { return }
        moveToTrash(directory.backupJournalPath)
        // What stays redundant: the lines journaled since the snapshot.
        redundantOpCount = max(0, redundantOpCount - rebuild.redundantOpCount)
    }

    // MARK: Reading

    /// What a read needs to open an entry's values outside the lock, and to check afterwards
    /// that the entry did not change meanwhile.
    struct ReadPlan {
        var lengths: SlotLengths
        var location: ValueLocation
        var sequenceNumber: UInt64
    }

    /// The first half of a read, under the lock: the committed entry's lengths, location and
    /// sequence number; `nil` on a miss (counted with `recordingRead`). The caller opens the
    /// values outside the lock, then calls ``finishRead(key:plan:opened:recordingRead:)``.
    ///
    /// - Complexity: O(1).
    mutating func planRead(key: String, recordingRead: Bool) throws(CacheError) -> ReadPlan? {
        try plannedEntry(key: key, recordingRead: recordingRead)?.plan
    }

    /// ``planRead(key:recordingRead:)`` with the entry's index, from one probe of the index.
    private mutating func plannedEntry(key: String, recordingRead: Bool) throws(CacheError) -> (
        index: Int, plan: ReadPlan
    )? {
        if isReadOnly, readOnlyView?.isReplaced ?? false { try refreshReadOnly() }
        guard let index = table.index(of: key), let lengths = table.readableLengths(index) else {
            if recordingRead { statistics.missCount += 1 }
            return nil
        }
        let plan = ReadPlan(
            lengths: lengths, location: table.location(index), sequenceNumber: table.sequenceNumber(index))
        return (index, plan)
    }

    /// A read planned and recorded in one lock hold, for values that check themselves (a
    /// packed record whose slots are all inline: its checksum covers the key and the lengths,
    /// and a superseded record still holds the values that were current at the plan): the hit,
    /// the LRU touch and the `READ` line are recorded with the plan, and no second lock hold
    /// is needed. If the values then cannot be read, the caller calls ``unrecordRead()`` and
    /// reads the validating way. Not for a read-only cache. The `READ` line is buffered, never
    /// written under the lock (see ``takeReadFlush()``).
    ///
    /// - Complexity: O(1).
    mutating func planRecordedRead(key: String) throws(CacheError) -> ReadPlan? {
        guard let (index, plan) = try plannedEntry(key: key, recordingRead: true) else { return nil }
        statistics.hitCount += 1
        table.touch(index)
        redundantOpCount += 1
        journal.append(.read, key: key)
        return plan
    }

    /// Takes back the hit a ``planRecordedRead(key:)`` counted, when the read
    /// goes the validating way after all (which counts it again). The LRU touch and the `READ`
    /// line stay: a second one changes nothing.
    mutating func unrecordRead() {
        statistics.hitCount -= 1
    }

    /// How the second half of a read ended.
    enum ReadOutcome {
        /// The values opened are the entry's committed ones: the read counts.
        case valid
        /// The entry changed (committed, removed, or, for a read-only cache, touched by the
        /// writer) after the plan: the caller closes what it opened and plans again.
        case changed
        /// The values were missing or damaged: the entry was dropped, the read is a miss.
        case missing
    }

    /// The second half of a read, under the lock: checks that the entry is still the one
    /// planned, then records the hit (LRU touch, buffered `READ` line) or, when its values
    /// could not be opened, drops it as damaged.
    ///
    /// - Complexity: O(1), plus, for a read-only cache, reading what the writer appended since.
    mutating func finishRead(key: String, plan: ReadPlan, opened: Bool, recordingRead: Bool) -> ReadOutcome {
        // A record moved by compaction counts as a change: the read plans again at its new place.
        guard let index = table.index(of: key), table[index].isReadable,
            table.sequenceNumber(index) == plan.sequenceNumber, table.location(index) == plan.location
        else { return .changed }
        if isReadOnly {
            let viewFileSystem = directory.fileSystem
            readOnlyView?.catchUp(fileSystem: viewFileSystem)
            if readOnlyView?.hasChanged(key) ?? false {
                // The writer changed the entry since the journal was read: its files are no
                // longer the ones the journal described. A miss until `refresh()`.
                if recordingRead { statistics.missCount += 1 }
                return readOnlyView?.isReplaced == true ? .changed : .missing
            }
        }
        guard opened else {
            if !isReadOnly { dropDamagedEntry(index) }
            if recordingRead { statistics.missCount += 1 }
            return .missing
        }
        if recordingRead {
            statistics.hitCount += 1
            table.touch(index)
            if !isReadOnly {
                redundantOpCount += 1
                journal.append(.read, key: key)
            }
        }
        return .valid
    }

    /// Whether enough `READ` lines are buffered to write them, and no flush is scheduled yet:
    /// `true` once, for a caller that must not write (an `async` read on the cooperative pool)
    /// to schedule one on the I/O pool, which then calls ``takeReadFlush()``.
    mutating func claimReadFlush() -> Bool {
        guard journal.isReadFlushDue, !isReadFlushClaimed else { return false }
        isReadFlushClaimed = true
        return true
    }

    /// The buffered `READ` lines, once enough have piled up, for the caller to write after it
    /// releases the lock (``JournalReadFlush/write()``): reads buffer their lines and never
    /// write under the lock, so readers of other keys never wait behind a `write(2)`. A failure
    /// of that write only marks the journal broken, as for any read.
    mutating func takeReadFlush() -> JournalReadFlush? {
        isReadFlushClaimed = false
        return journal.takeReadFlush()
    }

    /// The keys of committed entries, from least to most recently used.
    ///
    /// - Complexity: O(n).
    func readableKeys() -> [String] {
        table.indicesInLRUOrder.compactMap { index in table[index].isReadable ? table[index].key : nil }
    }

    // MARK: Removing

    /// Removes the committed entry for `key`; `false` if there is none.
    mutating func remove(key: String) throws(CacheError) -> Bool {
        guard !isReadOnly else { throw CacheError.readOnly(operation: "remove", key: key) }
        guard let index = table.index(of: key), table[index].isReadable else { return false }
        // A journal that stays broken does not stop a removal: see `removeEntries`.
        try? ensureJournalWritable(operation: "remove", key: key)
        try removeEntries([index], operation: "remove")
        statistics.removeCount += 1
        return true
    }

    /// Removes every committed entry that is not being edited.
    mutating func removeAll() throws(CacheError) {
        guard !isReadOnly else { throw CacheError.readOnly(operation: "evictAll") }
        try? ensureJournalWritable(operation: "evictAll", key: nil)
        let victims = table.indicesInLRUOrder.filter { table[$0].isReadable && !table[$0].isBeingEdited }
        try removeEntries(victims, operation: "evictAll")
        statistics.removeCount += victims.count
    }

    /// Journals `REMOVE` for the entries, then deletes their values and forgets them; with
    /// `syncsWrites` the lines reach stable storage before it returns.
    ///
    /// When the journal cannot take the lines (a full disk), the space is freed all the same
    /// where deleting the values is itself the removal (their files: the journal's `CLEAN`
    /// line then names missing files, which a read, now or after a reopen, treats as a miss
    /// and drops). The journal is then rebuilt into the space freed, which ends the failure
    /// state when it fits. An entry whose removal needs the journal (a packed record: its
    /// `CLEAN` line would bring it back) is journaled once the rebuild succeeds, or stays and
    /// the call throws: a removal that returns has happened, also after a reopen. So does an
    /// entry whose values cannot all be deleted.
    mutating func removeEntries(_ indices: [Int], operation: String) throws(CacheError) {
        guard !indices.isEmpty else { return }
        let key = indices.count == 1 ? table[indices[0]].key : nil
        if try journalRemovals(indices, operation: operation, key: key) { return }
        var failure: CacheError?
        var needJournal: [String] = []
        for index in indices {
            let entry = table[index]
            guard storage.deletesWithoutJournal(location: entry.location, lengths: entry.lengths) else {
                needJournal.append(entry.key)
                continue
            }
            guard storage.delete(key: entry.key, location: entry.location, lengths: entry.lengths) else {
                noteUndeletedFiles(of: entry.key)
                failure =
                    failure
                    ?? CacheError.ioFailure(
                        SystemCallError(call: "unlink", errno: Errno.io), operation: operation,
                        path: storage.path(key: entry.key, slot: 0, staged: false), key: entry.key)
                continue
            }
            forgetEntry(index)
        }
        try? rebuildJournal()
        if !needJournal.isEmpty {
            let left = needJournal.compactMap { table.index(of: $0) }
            let journaled = (try? journalRemovals(left, operation: operation, key: key)) ?? false
            if !journaled, let cause = journal.failure {
                failure = failure ?? CacheError.journalUnavailable(cause, operation: operation, key: key)
            }
        }
        if let failure { throw failure }
    }

    /// The journaled way of ``removeEntries(_:operation:)``: `REMOVE` lines, written in one
    /// `write`, then the values deleted and the entries forgotten. Returns `false`, with nothing
    /// removed, when the journal is broken or the write fails.
    ///
    /// - Throws: the failure of the `fsync` that `syncsWrites` asks for, the entries removed.
    private mutating func journalRemovals(_ indices: [Int], operation: String, key: String?) throws(CacheError)
        -> Bool
    {
        guard journal.failure == nil else { return false }
        guard !indices.isEmpty else { return true }
        for index in indices { journal.append(.remove, key: table[index].key) }
        do {
            try journal.flush(operation: operation, key: key, freesSpace: true)
        } catch {
            return false
        }
        for index in indices { forgetEntryDeletingValues(index) }
        redundantOpCount += indices.count
        noteGarbage()
        try journal.syncIfDurable(operation: operation, key: key)
        return true
    }

    /// Deletes an entry's committed values and drops it from the index, without journaling.
    mutating func forgetEntryDeletingValues(_ index: Int) {
        let entry = table[index]
        // Best effort: a file that cannot be deleted now is swept as unreferenced on open.
        if !storage.delete(key: entry.key, location: entry.location, lengths: entry.lengths) {
            noteUndeletedFiles(of: entry.key)
        }
        forgetEntry(index)
    }

    /// Drops an entry from the index, its values already deleted.
    ///
    /// An entry being edited keeps its record, so that its editor goes on alone, as if creating
    /// the entry anew (it must write every slot to commit): a second editor can never start on
    /// the key and share its staged values.
    private mutating func forgetEntry(_ index: Int) {
        let entry = table[index]
        if entry.isReadable { size -= entry.totalLength }
        if entry.isBeingEdited {
            table.setReadable(index, false)
            table.setLengths(index, SlotLengths(repeating: 0, count: valueCount))
        } else {
            table.remove(at: index)
        }
    }

    /// Drops an entry whose values are missing or damaged: a miss, never an error.
    mutating func dropDamagedEntry(_ index: Int) {
        let key = table[index].key
        journal.append(.remove, key: key)
        forgetEntryDeletingValues(index)
        redundantOpCount += 1
        try? journal.flush(operation: "drop damaged entry", key: key)
    }

    // MARK: Files of our own

    /// Renames `path` to a unique `….N.tmp` name and queues it for unlinking after the lock.
    /// The trash name can never be a key's file, so a key recreated meanwhile is safe, and a
    /// crash before the unlink leaves only a `.tmp` file, which opening sweeps away.
    mutating func moveToTrash(_ path: String) {
        // Only the backup journal goes to the trash: its name is ``CacheFileName/journalTrash(_:)``.
        trashCounter += 1
        let trash = directory.path(CacheFileName.journalTrash(UInt64(trashCounter)).name)
        do {
            try fileSystem.rename(path, to: trash)
            pendingDeletions.append(trash)
        } catch  where error.errno == Errno.noEntry {
            return
        } catch {
            deleteFile(path)
        }
    }

    /// Remembers that files of `key` could not be deleted: the next open sweeps them.
    mutating func noteUndeletedFiles(of key: String) {
        hasUndeletedFiles = true
        undeletedKeys.insert(key)
    }

    /// Deletes a file, best effort: a failure is remembered so the next open sweeps.
    mutating func deleteFile(_ path: String) {
        do {
            try fileSystem.removeFileIfPresent(path)
        } catch {
            hasUndeletedFiles = true
        }
    }

    /// The queued trash, emptied.
    mutating func takePendingDeletions() -> [String] {
        defer { pendingDeletions.removeAll() }
        return pendingDeletions
    }

    /// The queued trash, emptied, for the caller to unlink after the lock is released. When
    /// it returns files, the caller leaves ``trashBeingUnlinked`` once they are unlinked;
    /// `close()` waits until it has.
    mutating func takeTrashToUnlink() -> [String] {
        guard !pendingDeletions.isEmpty else { return [] }
        trashBeingUnlinked.enter()
        return takePendingDeletions()
    }

    // MARK: Closing

    /// Aborts open editors, evicts down to `maxSize`, flushes and closes the journal, leaves the
    /// clean marker when nothing stray can be left, and releases the directory lock. Returns the
    /// first failure; the state is closed regardless.
    mutating func close() -> CacheError? {
        guard !isClosed else { return nil }
        if isReadOnly {
            let viewFileSystem = directory.fileSystem
            readOnlyView?.close(fileSystem: viewFileSystem)
            isClosed = true
            return nil
        }
        var failure: CacheError?
        // The editors' objects live on; their commit will throw `cacheClosed`. Every slot counts
        // as staged, so that anything an editor already wrote is deleted.
        let everySlot = [StagedSlot?](repeating: StagedSlot(length: 0), count: valueCount)
        for index in table.indicesInLRUOrder where table[index].isBeingEdited {
            abortEdit(at: index, staged: everySlot)
        }
        do throws(CacheError) {
            try ensureJournalWritable(operation: "close", key: nil)
            try trimToSize()
            try journal.flush(operation: "close")
        } catch {
            failure = error
        }
        let isJournalHealthy = journal.failure == nil
        journal.close()
        storage.shutDown()
        // No stray file is left once the editors are aborted and the trash is unlinked, unless
        // a delete failed: then the next open sweeps. The marker is written while the
        // directory is still locked, so no other cache can open before it exists.
        for trash in takePendingDeletions() { deleteFile(trash) }
        if failure == nil && isJournalHealthy && !hasUndeletedFiles {
            let snapshot = IndexSnapshot.encode(
                table, appVersion: journal.appVersion, valueCount: valueCount,
                storesLocations: journal.format.storesLocations,
                redundantOpCount: redundantOpCount)
            directory.leaveCleanMarker(snapshot: snapshot ?? [])
        }
        releaseLock()
        return failure
    }

    /// Ends the session as a process exit would: buffered READ lines are written, open editors
    /// are left DIRTY (their files are deleted on the next open), the lock is released.
    mutating func closeAsProcessExit() {
        guard !isClosed else { return }
        if isReadOnly {
            let viewFileSystem = directory.fileSystem
            readOnlyView?.close(fileSystem: viewFileSystem)
            isClosed = true
            return
        }
        try? journal.flush(operation: "deinit")
        journal.close()
        storage.shutDown()
        releaseLock()
    }

    /// Ends the session as a killed process would: nothing buffered is written, no marker is
    /// left, the lock is released. For tests of recovery.
    mutating func closeAsCrash() {
        guard !isClosed else { return }
        journal.close()
        storage.shutDown()
        pendingDeletions.removeAll()
        releaseLock()
    }

    private mutating func releaseLock() {
        // Other threads' trash, taken under the lock before this, is unlinked without it; it
        // is this cache's to finish before another may open the directory. A few unlinks.
        trashBeingUnlinked.wait()
        lock?.release(using: fileSystem)
        lock = nil
        isClosed = true
    }
}
