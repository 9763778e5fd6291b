#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The glue between the public writing API (`DiskLRUCache.setData(_:forKey:)`, ``Editor``)
/// and the edit transaction of ``CacheState``: reserve under the lock, stage outside it,
/// publish under it.
extension DiskLRUCache {
    /// A one-shot write: reserve the key, stage each slot outside the lock, commit; no
    /// ``Editor`` object.
    func writeAtOnce(
        key: String, slots: some Sequence<Int>, requiresEntry: Bool, operation: CacheError.Operation,
        value: (Int) -> Data
    ) throws {
        let values = slots.map { ($0, value($0)) }
        let journalsDirty = storage.stagesFiles(forLengths: SlotLengths(values.lazy.map { $0.1.count }))
        let editorID = try locked(operation: operation, key: key) {
            try $0.reserveEdit(
                key: key, expectedSequenceNumber: nil, requiresEntry: requiresEntry, journalsDirty: journalsDirty)
        }
        guard let editorID else { throw CacheError.editInProgress(key: key, operation: operation) }
        var staged = [StagedSlot?](repeating: nil, count: valueCount)
        do {
            for (slot, data) in values {
                staged[slot] = try stage(key: key, slot: slot, operation: operation) { storage in
                    try data.withUnsafeBytes { buffer in try storage.stage(key: key, slot: slot, contents: buffer) }
                }
            }
        } catch {
            abandonEdit(key: key, editorID: editorID, staged: staged)
            throw error
        }
        try commitEdit(key: key, editorID: editorID, staged: staged, operation: operation)
    }

    /// Starts an edit; `nil` when another editor holds the key, or when the entry changed since
    /// `expectedSequenceNumber` (snapshot edits).
    func beginEdit(key: String, expectedSequenceNumber: UInt64?) throws -> Editor? {
        let editorID = try locked(operation: .edit, key: key) {
            try $0.reserveEdit(key: key, expectedSequenceNumber: expectedSequenceNumber, requiresEntry: false)
        }
        return editorID.map { Editor(cache: self, key: key, id: $0) }
    }

    /// Stages one slot through `write`, outside the lock, for `operation` (the public call). If
    /// the directory was deleted underneath the cache, the state recreates it and the slot is
    /// staged once more.
    func stage<Result>(
        key: String, slot: Int, operation: CacheError.Operation, _ write: (any ValueStorage) throws -> Result
    ) throws -> Result {
        try CacheError.reporting(operation) {
            do {
                return try write(storage)
            } catch let error as CacheError where error.isDirectoryVanished {
                _ = try locked(operation: operation) { try $0.restoreVanishedDirectory() }
                return try write(storage)
            }
        }
    }

    /// Publishes an edit's staged slots, for `operation` (``Editor/commit()`` or a one-shot
    /// write); see ``CacheState/completeEdit(key:editorID:staged:)``.
    func commitEdit(key: String, editorID: UInt64, staged: [StagedSlot?], operation: CacheError.Operation) throws {
        try CacheError.reporting(operation) {
            try withState(claimsCleanup: true) { (state) throws(CacheError) in
                try state.enterExclusive()
                try state.completeEdit(key: key, editorID: editorID, staged: staged)
            }
        }
    }

    /// Ends an edit without publishing it.
    func abandonEdit(key: String, editorID: UInt64, staged: [StagedSlot?]) {
        withState { state in
            // Sharing: its lines follow the others' (without the lock, the next operation writes them).
            try? state.enterExclusive()
            state.abandonEdit(key: key, editorID: editorID, staged: staged)
        }
    }
}
