/// Durable commits that share syncs (``GroupCommit``): packed storage with `syncsWrites`,
/// whose segments are its log. A group is staged under the lock (its records appended with one
/// `write`), synced without it, and applied under it; see `CacheState+GroupCommit.swift`.
extension DiskLRUCache {
    /// Commits one whole-entry record in a group. Returns `false` when the edit transaction
    /// must write it instead (its entry's values are files).
    ///
    /// - Throws: The commit's error, for this call alone.
    func commitInGroup(
        _ groupCommit: GroupCommit<CacheState.GroupMember, CacheState.GroupOutcome>, key: String,
        lengths: SlotLengths, record: [UInt8]
    ) throws(CacheError) -> Bool {
        let member = CacheState.GroupMember(key: key, lengths: lengths, record: record)
        switch groupCommit.submit(member, run: commitGroup) {
        case .committed: return true
        case .needsEdit: return false
        case .failed(let error): throw error.reported(by: .setData)
        }
    }

    /// Runs one group: staged in one lock hold, synced with none, applied in another.
    private func commitGroup(_ members: [CacheState.GroupMember]) -> [CacheState.GroupOutcome] {
        let staged = withState { $0.stageGroup(members) }
        var failure: CacheError?
        if let segment = staged.segment, let records = storage.recordStorage {
            do throws(CacheError) {
                try records.syncGroup(segment: segment)
            } catch {
                failure = error
            }
        }
        return withState(claimsCleanup: true, leadsGroup: true) {
            $0.applyGroup(staged, members: members, syncFailure: failure)
        }
    }

    /// Runs `body` while no group is being committed: work that must not come between a
    /// group's append and its application (compaction's copies, removals, a close).
    func outsideGroups<T>(_ body: () throws -> T) rethrows -> T {
        guard let groupCommit else { return try body() }
        return try groupCommit.exclusive(body)
    }
}
