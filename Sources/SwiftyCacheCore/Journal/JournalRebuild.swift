/// A journal rebuild in flight: begun under the cache lock
/// (``CacheState/beginJournalRebuild()``), its lines formatted and written to `journal.tmp`
/// without the lock, finished under the lock (``CacheState/finishJournalRebuild(_:written:)``).
/// Readers and writers go on meanwhile; the lines they journal follow the snapshot.
struct JournalRebuild {
    /// The open `journal.tmp` and the journal generation it replaces.
    let pending: JournalWriter.PendingRebuild
    /// The index when the rebuild began.
    let journal: CompactJournal
    /// The redundant lines counted when the rebuild began, which the new journal drops.
    let redundantOpCount: Int
    /// The storage whose records the snapshot names.
    let storage: any ValueStorage

    /// Formats and writes the snapshot to `journal.tmp`, without the cache lock, and forces it
    /// and the records it names to stable storage (always: it will replace a journal that may
    /// be durable). Returns whether all of it was written; a failure leaves the old journal in
    /// use.
    func write(with fileSystem: any FileSystem) -> Bool {
        do {
            try storage.makeDurable(operation: .rebuildJournal)
            try fileSystem.writeAll(pending.file, journal.bytes())
            try fileSystem.fsync(pending.file)
            return true
        } catch {
            return false
        }
    }
}
