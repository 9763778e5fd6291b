#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

extension DiskLRUCache {
    /// Writes the sets and removals of `batch` as one unit.
    ///
    /// In packed storage, when every value fits inline (``Storage/packed(inlineLimit:)``), the
    /// batch is atomic: a crash, a kill or a power cut leaves all of it or none of it, never a
    /// part. Its records are appended with one `write`, the journal records it in one line, and
    /// with ``Options/syncsWrites`` it costs the syncs of a single commit, however many entries
    /// it holds. A batch that throws leaves every key it sets as it was (a key it would have
    /// created stays absent), also when its records were written and its journal line failed.
    /// A batch that sets a value too large to be inline, or a key whose current values are
    /// files, is written one entry at a time.
    ///
    /// In file storage, whose journal is the Java library's, each entry is atomic on its own
    /// (the Java format has no line for more): a crash may leave some of the batch's entries
    /// written and others not, never an entry with a mix of old and new values.
    ///
    /// - Throws: ``CacheError/Code/invalidKey`` or ``CacheError/Code/wrongValueCount`` for any
    ///   change, before anything is written; ``CacheError/Code/invalidConfiguration`` for a
    ///   batch too large for one journal line (32 MiB, several hundred thousand entries);
    ///   ``CacheError/Code/editInProgress`` when an editor holds one of the keys; the errors of
    ///   `setData(_:forKey:)`.
    /// - Complexity: O(changes), one `write` of the records and one of the journal.
    public func write(_ batch: WriteBatch) throws {
        var keyBytes = 0
        for member in batch.changes {
            let key = member.key
            switch member.change {
            case .set(let values):
                try validate(key, operation: .writeBatch)
                guard values.count == valueCount else {
                    throw CacheError.wrongValueCount(
                        expected: valueCount, got: values.count, key: key, operation: .writeBatch)
                }
            case .remove:
                try validateForReading(key, operation: .writeBatch)
            }
            keyBytes += key.utf8.count
        }
        guard !batch.isEmpty else { return }
        if let (members, records) = batchMembers(batch) {
            try checkBatchLine(members: members.count, keyBytes: keyBytes)
            let committed = try locked(operation: .writeBatch, claimsCleanup: true) {
                try $0.commitBatch(members, records: records)
            }
            if committed { return }
        }
        for member in batch.changes {
            let key = member.key
            switch member.change {
            case .set(let values): try CacheError.reporting(.writeBatch) { try setData(values, forKey: key) }
            case .remove: _ = try CacheError.reporting(.writeBatch) { try removeValue(forKey: key) }
            }
        }
    }

    /// Throws when a batch of `members` naming `keyBytes` bytes of keys is too large for one
    /// journal line.
    func checkBatchLine(members: Int, keyBytes: Int) throws(CacheError) {
        guard
            Journal.batchLineBound(members: members, keyBytes: keyBytes, valueCount: valueCount)
                <= Journal.maximumBatchLineLength
        else {
            throw CacheError.invalidConfiguration(
                "a batch of \(members) changes is too large for one journal line; write it in parts",
                operation: .writeBatch)
        }
    }

    /// The batch's changes with their records built outside the lock, into one buffer; `nil`
    /// when it cannot be one unit (file storage, or a value too large to be inline).
    private func batchMembers(_ batch: WriteBatch) -> (members: [CacheState.BatchMember], records: [UInt8])? {
        guard let storage = storage.recordStorage else { return nil }
        var members: [CacheState.BatchMember] = []
        members.reserveCapacity(batch.count)
        var records: [UInt8] = []
        for member in batch.changes {
            let key = member.key
            switch member.change {
            case .set(let values):
                let start = records.count
                guard storage.appendRecord(key: key, values: values, to: &records) else { return nil }
                members.append(
                    .set(
                        key: key, lengths: SlotLengths(values.lazy.map(\.count)), record: start..<records.count,
                        tag: nil))
            case .remove:
                members.append(.remove(key: key))
            }
        }
        return (members, records)
    }
}
