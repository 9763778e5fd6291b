/// A journal rebuild in flight: begun under the cache lock
/// (``CacheState/beginJournalRebuild()``), written to `journal.tmp` a batch at a time
/// (``write(with:batch:)``), finished under the lock (``CacheState/finishJournalRebuild(_:written:)``).
/// Readers and writers go on meanwhile; the lines they journal follow the rebuilt ones.
///
/// It keeps the order of the entries when it began (4 bytes each), not a copy of the index:
/// each batch of entries is copied under the lock as they are then, and its lines formatted and
/// written without it. An entry changed after the rebuild began may so be written as it is
/// later than the beginning, which replays to the same state: every line journaled since the
/// beginning is appended after the rebuilt lines, and each sets its entry's state whole (`CLEAN`,
/// `REMOVE`) or only marks it (`DIRTY`, `READ`), so the last of them wins either way.
struct JournalRebuild {
    /// The open `journal.tmp` and the journal generation it replaces.
    let pending: JournalWriter.PendingRebuild
    /// The header and the `REMOVE` lines of keys whose files could not be deleted.
    let prefix: [UInt8]
    /// The index's records from least to most recently used when the rebuild began.
    let order: [UInt32]
    /// The redundant lines counted when the rebuild began, which the new journal drops.
    let redundantOpCount: Int
    /// The reads not journaled when the rebuild began, whose order the new journal records.
    let unjournaledTouches: Int
    /// The storage whose records the rebuilt lines name.
    let storage: any ValueStorage

    /// Writes the rebuilt lines to `journal.tmp` without the cache lock, but for `batch`, which
    /// copies the entries of one batch of ``order`` under it; then forces the records it names and the file
    /// to stable storage (always: it will replace a journal that may be durable). Returns
    /// whether all of it was written; a failure leaves the old journal in use.
    ///
    /// - Complexity: O(n) in the entries, in batches of ``RebuiltJournal/batchSize(forEntries:)``.
    func write(with fileSystem: any FileSystem, batch: (ArraySlice<UInt32>) -> RebuiltJournal.Batch) -> Bool {
        do {
            try fileSystem.writeAll(pending.file, prefix)
            let size = RebuiltJournal.batchSize(forEntries: order.count)
            var lines: [UInt8] = []
            lines.reserveCapacity(size * 64)
            var start = 0
            while start < order.count {
                let end = min(order.count, start + size)
                batch(order[start..<end]).appendLines(to: &lines)
                try fileSystem.writeAll(pending.file, lines)
                lines.removeAll(keepingCapacity: true)
                start = end
            }
            // After the last batch: every record its lines name is committed by now.
            try storage.makeDurable(operation: .rebuildingJournal)
            try fileSystem.fsync(pending.file)
            return true
        } catch {
            return false
        }
    }
}
