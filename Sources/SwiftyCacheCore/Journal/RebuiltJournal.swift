/// What a rebuilt journal holds: the header, a `REMOVE` for each key whose files could not be
/// deleted (so that a later `CLEAN` of the same key wins on replay), then, in LRU order, `CLEAN`
/// for each committed entry and `DIRTY` for each one whose editor already journaled it.
///
/// Its lines are formatted a batch at a time into a buffer of bounded size and written out, so
/// that neither the journal nor a copy of the index is ever held whole: a rebuild of ten million
/// entries needs a mebibyte beside the index (and, for a rebuild outside the lock, the order of
/// the entries, 4 bytes each; see ``JournalRebuild``).
enum RebuiltJournal {
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

    /// Writes the whole rebuilt journal of `table` after `prefix` to `file`, a batch at a time.
    ///
    /// - Complexity: O(n) in the entries, with a buffer of about a mebibyte.
    static func write(
        _ table: EntryTable, prefix: [UInt8], format: Journal.Format, valueCount: Int, to file: Int32,
        with fileSystem: any FileSystem
    ) throws(SystemCallFailure) {
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
            var lines = Batch(format: format, valueCount: valueCount, capacity: batch.count)
            lines.copy(batch, from: table)
            lines.appendLines(to: &bytes)
            try fileSystem.writeAll(file, bytes)
            bytes.removeAll(keepingCapacity: true)
        }
    }
}
