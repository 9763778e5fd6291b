/// What a compacted journal holds: the header, a `REMOVE` for each key whose files could not be
/// deleted (so that a later `CLEAN` of the same key wins on replay), then, in LRU order, `CLEAN`
/// for each committed entry and `DIRTY` for each one whose editor already journaled it.
///
/// A value: the index is copied on write, so taking one under the lock is O(1), and its lines
/// can be formatted after the lock is released.
struct CompactJournal {
    let header: [UInt8]
    let table: EntryTable
    let removedKeys: Set<String>
    let format: Journal.Format

    /// The journal's bytes.
    ///
    /// - Complexity: O(n) in the entries.
    func bytes() -> [UInt8] {
        var bytes = header
        bytes.reserveCapacity(bytes.count + table.count * (format.storesLocations ? 72 : 48))
        for key in removedKeys { Journal.appendLine(.remove, key: key, format: format, to: &bytes) }
        var cursor = table.eldest
        while cursor != -1 {
            let entry = table[cursor]
            if entry.isBeingEdited && entry.isDirtyJournaled {
                Journal.appendLine(.dirty, key: entry.key, format: format, to: &bytes)
            } else if entry.isReadable {
                Journal.appendLine(
                    .clean(lengths: entry.lengths, location: entry.location), key: entry.key, format: format,
                    to: &bytes)
            }
            cursor = table.indexAfter(cursor)
        }
        return bytes
    }
}

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
            try storage.makeDurable(operation: "rebuild journal")
            try fileSystem.writeAll(pending.file, journal.bytes())
            try fileSystem.fsync(pending.file)
            return true
        } catch {
            return false
        }
    }
}
