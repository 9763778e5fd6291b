/// A batch of a rebuilt journal's entries, copied out of the index: what their lines need (the
/// key's bytes, the lengths, the location, `DIRTY` or `CLEAN`) and nothing else.
///
/// A rebuild outside the lock copies each batch under the cache lock, which is all it holds the
/// lock for, and formats and writes its lines without it: at ten million entries the formatting
/// (hex keys to bytes, varints, escapes, a check per line) held the lock for seconds, and every
/// read waited behind it.
extension RebuiltJournal {
    struct Batch {
        /// The lines' format and the cache's slot count.
        let format: Journal.Format
        let valueCount: Int
        /// The keys' bytes, back to back, in the entries' order.
        private var keys: [UInt8] = []
        private var entries: [Item] = []

        private struct Item {
            var isDirty: Bool
            /// Where the key ends in `keys`; it starts where the one before ends.
            var keyEnd: Int
            var lengths: SlotLengths
            var location: ValueLocation
        }

        init(format: Journal.Format, valueCount: Int, capacity: Int = 0) {
            self.format = format
            self.valueCount = valueCount
            entries.reserveCapacity(capacity)
            keys.reserveCapacity(capacity * 64)
        }

        /// Copies from `table` the entry of each of `records` that has a line: `DIRTY` for an
        /// entry whose edit is journaled, `CLEAN` for a committed one, nothing for a free record
        /// or an edit of a new entry not journaled yet.
        ///
        /// - Complexity: O(records) and the bytes of their keys.
        mutating func copy(_ records: some Sequence<UInt32>, from table: EntryTable) {
            for record in records {
                let index = Int(record)
                guard let line = table.journalLine(at: index) else { continue }
                table.withKey(at: index) { keys.append(contentsOf: $0) }
                entries.append(
                    Item(isDirty: line.isDirty, keyEnd: keys.count, lengths: line.lengths, location: line.location))
            }
        }

        /// Appends the lines of the batch, in its order: committed entries in `BLOCK` lines in a
        /// packed journal (``JournalBlock``), but for keys a block cannot hold.
        ///
        /// - Complexity: O(entries) and the bytes of their keys.
        func appendLines(to bytes: inout [UInt8]) {
            var block = format.storesLocations ? JournalBlock.Encoder(valueCount: valueCount) : nil
            keys.withUnsafeBufferPointer { keys in
                var keyStart = 0
                for entry in entries {
                    let key = UnsafeBufferPointer(rebasing: keys[keyStart..<entry.keyEnd])
                    keyStart = entry.keyEnd
                    if entry.isDirty {
                        block?.flush(to: &bytes)
                        Journal.appendLine(.dirty, key: key, format: format, to: &bytes)
                    } else if entry.lengths.count == valueCount, block?.canHold(key: key) == true {
                        block?.append(key: key, lengths: entry.lengths, location: entry.location, to: &bytes)
                    } else {
                        block?.flush(to: &bytes)
                        Journal.appendLine(
                            .clean(lengths: entry.lengths, location: entry.location), key: key, format: format,
                            to: &bytes)
                    }
                }
            }
            block?.flush(to: &bytes)
        }
    }
}

extension EntryTable {
    /// What the rebuilt journal says of the entry in `slot`: `DIRTY` for an edit already
    /// journaled, `CLEAN` with its lengths and location for a committed entry, or `nil` (a free
    /// record, or the first edit of an entry not journaled yet).
    func journalLine(at slot: Int) -> (isDirty: Bool, lengths: SlotLengths, location: ValueLocation)? {
        guard isLive(slot: slot) else { return nil }
        let record = records[slot]
        let flags = record.flags
        if flags.contains(.editing) && flags.contains(.dirtyJournaled) { return (true, [], .none) }
        guard flags.contains(.readable) else { return nil }
        return (false, lengths(of: record, at: slot), location(of: record, at: slot))
    }
}
