import Dispatch

/// The journal under the lock: making it writable again after a failure, rebuilding it in
/// place, and a rebuild whose bulk is written outside the lock.
extension CacheState {
    /// Rebuilds the journal if an earlier write failed; throws if it still cannot be written.
    mutating func ensureJournalWritable(operation: CacheError.Operation, key: String?) throws(CacheError) {
        journal.adoptDeferredFailure()
        guard let failure = journal.failure else { return }
        do {
            try rebuildJournal()
        } catch {
            throw CacheError.journalUnavailable(error.cause as? CacheError ?? failure, operation: operation, key: key)
        }
    }

    /// Writes a compact journal of the live index and swaps it in (see
    /// ``JournalWriter/replace(writing:)``): `CLEAN` for each committed entry and `DIRTY` for each
    /// one whose editor already journaled it, in LRU order. All of it under the lock: for
    /// repairs, `flush()` and recovery; background cleanup writes its rebuilds outside the lock
    /// (``beginJournalRebuild()``).
    ///
    /// - Complexity: O(n) in the number of entries, through a buffer of about a mebibyte; run
    ///   when redundant lines outnumber them.
    mutating func rebuildJournal() throws(CacheError) {
        // Sharing: the others' lines a set's hold deferred are in the index first.
        try settleDeferredLines()
        // The records the new journal names are durable before it replaces the old one.
        try storage.makeDurable(operation: .rebuildingJournal)
        let prefix = compactJournalPrefix()
        let format = journal.format
        let fileSystem = fileSystem
        let valueCount = valueCount
        try journal.replace { [table] file throws(SystemCallFailure) in
            try RebuiltJournal.write(
                table, prefix: prefix, format: format, valueCount: valueCount, to: file, with: fileSystem)
        }
        // A leftover backup is harmless: opening deletes it when `journal` exists.
        moveToTrash(directory.backupJournalPath)
        redundantOpCount = 0
        unjournaledTouches = 0
    }

    /// The header and a `REMOVE` line for each key whose files could not be deleted and that is
    /// no longer in the index.
    /// In a directory whose segments are its log, a `TAIL` line naming where the next append
    /// goes ends it: everything before that position is what the rebuilt lines name.
    func compactJournalPrefix() -> [UInt8] {
        var prefix = RebuiltJournal.prefix(
            header: journal.header(), removedKeys: undeletedKeys.filter { table.index(of: $0) == nil },
            format: journal.format)
        if journal.logsRecords, records != nil {
            Journal.appendLine(.tail(logTailPosition), key: logTailKey, format: journal.format, to: &prefix)
        }
        return prefix
    }

    /// Begins a rebuild of the journal whose bulk is written outside the lock, when one is
    /// due: see ``JournalWriter/beginRebuild()``. The caller writes it without the lock
    /// (``JournalRebuild/write(with:batch:)``, copying each batch with
    /// ``compactJournalBatch(of:)`` under it), then calls ``finishJournalRebuild(_:written:)``.
    ///
    /// - Complexity: O(n): the order of the entries, 4 bytes each, is all it copies.
    mutating func beginJournalRebuild(evenIfNotDue: Bool = false) -> JournalRebuild? {
        guard isJournalRebuildRequired || (evenIfNotDue && (redundantOpCount > 0 || journal.linesSinceRewrite > 0)),
            !isClosed, !isReadOnly,
            let pending = journal.beginRebuild()
        else {
            return nil
        }
        return JournalRebuild(
            pending: pending, prefix: compactJournalPrefix(), order: table.recordsInLRUOrder,
            redundantOpCount: redundantOpCount, unjournaledTouches: unjournaledTouches, storage: storage)
    }

    /// A batch of a rebuild begun by ``beginJournalRebuild()``: the entries of `records` as they
    /// are now, copied for their lines to be formatted after the lock is released.
    ///
    /// - Complexity: O(records) and the bytes of their keys.
    func compactJournalBatch(of records: ArraySlice<UInt32>) -> RebuiltJournal.Batch {
        var batch = RebuiltJournal.Batch(format: journal.format, valueCount: valueCount, capacity: records.count)
        batch.copy(records, from: table)
        return batch
    }

    /// Ends a rebuild begun by ``beginJournalRebuild()``: the lines journaled meanwhile are
    /// appended and the new journal swapped in, or the rebuild is dropped (see
    /// ``JournalWriter/finishRebuild(_:written:)``).
    @discardableResult
    mutating func finishJournalRebuild(_ rebuild: JournalRebuild, written: Bool) -> Bool {
        guard (try? journal.finishRebuild(rebuild.pending, written: written)) == true else { return false }
        moveToTrash(directory.backupJournalPath)
        // What stays redundant: the lines journaled since the rebuild began.
        redundantOpCount = max(0, redundantOpCount - rebuild.redundantOpCount)
        unjournaledTouches = max(0, unjournaledTouches - rebuild.unjournaledTouches)
        return true
    }
}
