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
                Journal.appendLine(.dirty, key: table.key(at: cursor), format: format, to: &bytes)
            } else if entry.isReadable {
                Journal.appendLine(
                    .clean(lengths: entry.lengths, location: entry.location), key: table.key(at: cursor), format: format,
                    to: &bytes)
            }
            cursor = table.indexAfter(cursor)
        }
        return bytes
    }
}
