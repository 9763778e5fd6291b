/// What a compacted journal holds: the header, a `REMOVE` for each key whose files could not be
/// deleted (so that a later `CLEAN` of the same key wins on replay), then, in LRU order, `CLEAN`
/// for each committed entry and `DIRTY` for each one whose editor already journaled it.
///
/// Its lines are formatted a batch at a time into a buffer of bounded size and written out, so
/// that neither the journal nor a copy of the index is ever held whole: a rebuild of ten million
/// entries needs a mebibyte beside the index (and, for a rebuild outside the lock, the order of
/// the entries, 4 bytes each; see ``JournalRebuild``).
enum CompactJournal {
    /// Entries formatted per batch: about 100 bytes each, so the buffer stays near a mebibyte.
    static let batchSize = 8192

    /// The batch of a rebuild outside the lock for `count` entries: at most ``batchSize``, at
    /// least 1,024, and four batches in between, so that writers get the lock between them in a
    /// cache of a few thousand entries too (and a test of a thousand sees more than one batch).
    static func batchSize(forEntries count: Int) -> Int { min(batchSize, max(1_024, count / 4)) }

    /// The header and the `REMOVE` lines that precede the entries.
    static func prefix(header: [UInt8], removedKeys: some Sequence<String>, format: Journal.Format) -> [UInt8] {
        var bytes = header
        for key in removedKeys { Journal.appendLine(.remove, key: key, format: format, to: &bytes) }
        return bytes
    }

    /// Appends the line of each entry in `records` as it is now: `DIRTY` for an entry whose
    /// edit is journaled, `CLEAN` for a committed one, nothing for a free record or an edit of a
    /// new entry not journaled yet. In a packed journal committed entries go into `BLOCK` lines
    /// (``JournalBlock``), in order, but for keys a block cannot hold. Keys are copied from the
    /// index in place.
    ///
    /// - Complexity: O(records).
    static func appendLines(
        of records: some Sequence<UInt32>, in table: EntryTable, format: Journal.Format, valueCount: Int,
        to bytes: inout [UInt8]
    ) {
        var block = format.storesLocations ? JournalBlock.Encoder(valueCount: valueCount) : nil
        for record in records {
            let index = Int(record)
            guard table.isLive(slot: index) else { continue }
            let entry = table[index]
            if entry.isBeingEdited && entry.isDirtyJournaled {
                block?.flush(to: &bytes)
                table.withKey(at: index) { Journal.appendLine(.dirty, key: $0, format: format, to: &bytes) }
            } else if entry.isReadable {
                table.withKey(at: index) { key in
                    if entry.lengths.count == valueCount, block?.canHold(key: key) == true {
                        block?.append(key: key, lengths: entry.lengths, location: entry.location, to: &bytes)
                    } else {
                        block?.flush(to: &bytes)
                        Journal.appendLine(
                            .clean(lengths: entry.lengths, location: entry.location), key: key, format: format,
                            to: &bytes)
                    }
                }
            }
        }
        block?.flush(to: &bytes)
    }

    /// Writes the whole compact journal of `table` after `prefix` to `file`, a batch at a time.
    ///
    /// - Complexity: O(n) in the entries, with a buffer of about a mebibyte.
    static func write(
        _ table: EntryTable, prefix: [UInt8], format: Journal.Format, valueCount: Int, to file: Int32,
        with fileSystem: any FileSystem
    ) throws(SystemCallError) {
        try fileSystem.writeAll(file, prefix)
        var bytes: [UInt8] = []
        bytes.reserveCapacity(batchSize * 128)
        var batch: [UInt32] = []
        batch.reserveCapacity(batchSize)
        var cursor = table.eldest
        while cursor != -1 {
            batch.removeAll(keepingCapacity: true)
            while cursor != -1 && batch.count < batchSize {
                batch.append(EntryTable.link(cursor))
                cursor = table.indexAfter(cursor)
            }
            appendLines(of: batch, in: table, format: format, valueCount: valueCount, to: &bytes)
            try fileSystem.writeAll(file, bytes)
            bytes.removeAll(keepingCapacity: true)
        }
    }
}
