#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

extension DiskLRUCache {
    /// Entries whose values the layer above writes straight into one buffer (the object
    /// cache's batches): each entry's slots back to back, after room for a packed record's
    /// header, which ``appendEntry(_:)`` fills in. ``DiskLRUCache/write(_:entries:)``
    /// commits the entries it is given as one batch, their records written as they lie in the
    /// buffer: no `Data` per slot, no record built per entry, no second copy of the values.
    ///
    /// Made by ``DiskLRUCache/makeEncodedBatch()`` for the cache's storage. In file storage, or
    /// when a value is too large to be inline, the entries are written one at a time, as
    /// ``WriteBatch``'s are then.
    @usableFromInline
    package struct EncodedBatch: Sendable {
        /// One entry: its key, where its bytes are, and its slots' lengths.
        struct Entry: Sendable {
            let key: String
            let start: Int
            let end: Int
            let lengths: SlotLengths
            /// The key's tag in journal lines, taken from its record's seal.
            let tag: UInt32?
        }

        private(set) var bytes: [UInt8] = []
        private(set) var entries: [Entry] = []
        /// Whether every entry is a sealed record: packed storage, every value inline.
        private(set) var holdsRecords: Bool
        /// Packed storage's inline limit; `nil` in file storage (no header room).
        let inlineLimit: Int?
        let valueCount: Int

        init(valueCount: Int, inlineLimit: Int?) {
            self.valueCount = valueCount
            self.inlineLimit = inlineLimit
            holdsRecords = inlineLimit != nil
        }

        /// The number of entries.
        @usableFromInline
        package var count: Int { entries.count }

        /// Room for `byteCount` bytes of values more, to be appended.
        package mutating func reserveCapacity(_ byteCount: Int) {
            bytes.reserveCapacity(byteCount)
        }

        /// The key of entry `index`.
        package func key(ofEntry index: Int) -> String { entries[index].key }

        /// Appends an entry: `write` appends its slots' bytes to the buffer, back to back, and
        /// returns its key and each slot's length. If `write` throws, the entry and its bytes
        /// are dropped and the error is rethrown.
        ///
        /// - Complexity: O(entry size): the record's checksum in packed storage.
        package mutating func appendEntry(_ write: (inout [UInt8]) throws -> (key: String, lengths: SlotLengths))
            rethrows
        {
            let start = bytes.count
            let header = inlineLimit == nil ? 0 : PackedRecord.headerSize(valueCount: valueCount)
            for _ in 0..<header { bytes.append(0) }
            let key: String
            let lengths: SlotLengths
            do {
                (key, lengths) = try write(&bytes)
            } catch {
                bytes.removeSubrange(start...)
                throw error
            }
            var tag: UInt32?
            if let inlineLimit, holdsRecords {
                let keyHash = PackedRecord.seal(
                    &bytes, start: start, end: bytes.count, key: key, lengths: lengths, inlineLimit: inlineLimit)
                holdsRecords = keyHash != nil
                tag = keyHash.map { UInt32(truncatingIfNeeded: $0) }
            }
            entries.append(Entry(key: key, start: start, end: bytes.count, lengths: lengths, tag: tag))
        }

        /// The slots of entry `index` as `Data`, for a write one entry at a time; `nil` when its
        /// lengths do not fill its bytes.
        func values(ofEntry index: Int) -> [Data]? {
            let entry = entries[index]
            var cursor = entry.start + (inlineLimit == nil ? 0 : PackedRecord.headerSize(valueCount: valueCount))
            var values: [Data] = []
            values.reserveCapacity(entry.lengths.count)
            for length in entry.lengths {
                guard length >= 0, cursor + length <= entry.end else { return nil }
                values.append(Data(bytes[cursor..<(cursor + length)]))
                cursor += length
            }
            return cursor == entry.end ? values : nil
        }
    }

    /// An empty ``EncodedBatch`` for this cache's storage.
    package func makeEncodedBatch() -> EncodedBatch {
        EncodedBatch(valueCount: valueCount, inlineLimit: storage.recordStorage?.inlineLimit)
    }

    /// Writes entries `indices` of `batch`, in that order, as one unit, as
    /// ``write(_:)-(WriteBatch)`` writes a batch of sets: in packed storage, with every value
    /// inline, their records appended as they lie in the batch's buffer with one `write`, one
    /// `BATCH` line, and with ``Options/syncsWrites`` the syncs of one commit; otherwise one
    /// entry at a time.
    ///
    /// - Throws: As ``write(_:)-(WriteBatch)``.
    /// - Complexity: O(entries), one `write` of the records and one of the journal.
    package func write(_ batch: EncodedBatch, entries indices: [Int]) throws {
        var keyBytes = 0
        // The entries' fields read in place: an entry copied whole would retain its key.
        for index in indices {
            try validate(batch.entries[index].key, operation: .writeBatch)
            guard batch.entries[index].lengths.count == valueCount else {
                throw CacheError.wrongValueCount(
                    expected: valueCount, got: batch.entries[index].lengths.count, key: batch.entries[index].key,
                    operation: .writeBatch)
            }
            keyBytes += batch.entries[index].key.utf8.count
        }
        guard !indices.isEmpty else { return }
        if batch.holdsRecords, storage.recordStorage != nil {
            let members = indices.map { index in
                let entry = batch.entries[index]
                return CacheState.BatchMember.set(
                    key: entry.key, lengths: entry.lengths, record: entry.start..<entry.end, tag: entry.tag)
            }
            try checkBatchLine(members: members.count, keyBytes: keyBytes)
            let committed = try locked(operation: .writeBatch, claimsCleanup: true) {
                try $0.commitBatch(members, records: batch.bytes)
            }
            if committed { return }
        }
        for index in indices {
            let key = batch.entries[index].key
            guard let values = batch.values(ofEntry: index) else {
                throw CacheError.wrongValueCount(
                    expected: valueCount, got: batch.entries[index].lengths.count, key: key, operation: .writeBatch)
            }
            try CacheError.reporting(.writeBatch) { try setData(values, forKey: key) }
        }
    }
}
