import Dispatch

/// Removals, evictions' journal lines and entries dropped as damaged.
extension CacheState {
    /// Removes the committed entry for `key`; `false` if there is none.
    mutating func remove(key: String) throws(CacheError) -> Bool {
        guard !isReadOnly else { throw CacheError.readOnly(operation: .remove, key: key) }
        let repair = repairJournal(operation: .remove, key: key)
        guard let index = table.index(of: key), table[index].isReadable else {
            // Memory may have forgotten the key after a failed write whose old value the
            // journal on disk still names: only a repaired journal makes "no entry" true there.
            if let repair { throw repair }
            return false
        }
        // A journal that stays broken does not stop a removal: see `removeEntries`.
        try removeEntries([index], operation: .remove)
        statistics.removeCount += 1
        return true
    }

    /// Removes every committed entry that is not being edited.
    mutating func removeAll() throws(CacheError) {
        guard !isReadOnly else { throw CacheError.readOnly(operation: .evictAll) }
        let repair = repairJournal(operation: .evictAll, key: nil)
        let victims = table.indicesInLRUOrder.filter { table[$0].isReadable && !table[$0].isBeingEdited }
        // One change for all of them (even when some stay after a failure: re-read them).
        defer { if !victims.isEmpty { changes.record(key: nil, kind: .cleared) } }
        try removeEntries(victims, operation: .evictAll)
        statistics.removeCount += victims.count
        // Entries forgotten after failed writes may still be named by the journal on disk.
        if let repair, journal.failure != nil { throw repair }
    }

    /// Rebuilds a broken journal before a removal; the failure when it stays broken.
    private mutating func repairJournal(operation: CacheError.Operation, key: String?) -> CacheError? {
        do {
            try ensureJournalWritable(operation: operation, key: key)
            return nil
        } catch {
            return error
        }
    }

    /// Journals `REMOVE` for the entries, then deletes their values and forgets them; with
    /// `syncsWrites` the lines reach stable storage before it returns.
    ///
    /// When the journal cannot take the lines (a full disk), the space is freed all the same
    /// where deleting the values is itself the removal (their files: the journal's `CLEAN`
    /// line then names missing files, which a read, now or after a reopen, treats as a miss
    /// and drops). The journal is then rebuilt into the space freed, which ends the failure
    /// state when it fits. An entry whose removal needs the journal (a packed record: its
    /// `CLEAN` line would bring it back) is journaled once the rebuild succeeds, or stays and
    /// the call throws: a removal that returns has happened, also after a reopen. So does an
    /// entry whose values cannot all be deleted.
    mutating func removeEntries(_ indices: [Int], operation: CacheError.Operation) throws(CacheError) {
        guard !indices.isEmpty else { return }
        let key = indices.count == 1 ? table.key(at: indices[0]) : nil
        if try journalRemovals(indices, operation: operation, key: key) { return }
        var failure: CacheError?
        var needJournal: [String] = []
        for index in indices {
            let entry = table[index]
            let key = table.key(at: index)
            guard storage.deletesWithoutJournal(location: entry.location, lengths: entry.lengths) else {
                needJournal.append(key)
                continue
            }
            guard storage.delete(key: key, location: entry.location, lengths: entry.lengths) else {
                noteUndeletedFiles(of: key)
                failure =
                    failure
                    ?? CacheError.ioFailure(
                        SystemCallFailure(call: "unlink", errno: Errno.io), operation: operation,
                        path: storage.path(key: key, slot: 0, staged: false), key: key)
                continue
            }
            recordRemoval(of: key, by: operation)
            forgetEntry(index)
        }
        try? rebuildJournal()
        if !needJournal.isEmpty {
            let left = needJournal.compactMap { table.index(of: $0) }
            let journaled = (try? journalRemovals(left, operation: operation, key: key)) ?? false
            if !journaled, let cause = journal.failure {
                failure = failure ?? CacheError.journalUnavailable(cause, operation: operation, key: key)
            }
        }
        if let failure { throw failure }
    }

    /// The journaled way of ``removeEntries(_:operation:)``: `REMOVE` lines, written in one
    /// `write`, then the values deleted and the entries forgotten. Returns `false`, with nothing
    /// removed, when the journal is broken or the write fails.
    ///
    /// - Throws: the failure of the `fsync` that `syncsWrites` asks for, the entries removed.
    private mutating func journalRemovals(_ indices: [Int], operation: CacheError.Operation, key: String?)
        throws(CacheError)
        -> Bool
    {
        guard journal.failure == nil else { return false }
        guard !indices.isEmpty else { return true }
        for index in indices { journal.append(.remove, key: table.key(at: index)) }
        // In a logging directory: past every record these lines remove, so that an open after
        // a crash never reads one of them back from the log.
        if journal.logsRecords, records != nil {
            journal.append(.tail(logTailPosition), key: logTailKey)
        }
        do {
            try journal.flush(operation: operation, key: key, freesSpace: true)
        } catch {
            return false
        }
        for index in indices {
            recordRemoval(of: table.key(at: index), by: operation)
            forgetEntryDeletingValues(index)
        }
        noteRemovedLines(indices.count, evicted: operation == .evicting)
        noteGarbage()
        try journal.syncIfDurable(operation: operation, key: key)
        if journal.logsRecords { records?.noteTailJournaled() }
        return true
    }

    /// Records the change a removal makes, by the operation that made it: an eviction, or a
    /// removal (`evictAll` records one change for all its entries instead).
    private func recordRemoval(of key: String, by operation: CacheError.Operation) {
        switch operation {
        case .evictAll: return
        case .evicting: changes.record(key: key, kind: .evicted)
        default: changes.record(key: key, kind: .removed)
        }
    }

    /// Deletes an entry's committed values and drops it from the index, without journaling.
    mutating func forgetEntryDeletingValues(_ index: Int) {
        let entry = table[index]
        let key = table.key(at: index)
        // Best effort: a file that cannot be deleted now is swept as unreferenced on open.
        if !storage.delete(key: key, location: entry.location, lengths: entry.lengths) {
            noteUndeletedFiles(of: key)
        }
        forgetEntry(index)
    }

    /// Drops an entry from the index, its values already deleted.
    ///
    /// An entry being edited keeps its record, so that its editor goes on alone, as if creating
    /// the entry anew (it must write every slot to commit): a second editor can never start on
    /// the key and share its staged values.
    private mutating func forgetEntry(_ index: Int) {
        dropPin(at: index)
        let entry = table[index]
        if entry.isReadable { size -= entry.totalLength }
        if entry.isBeingEdited {
            table.setReadable(index, false)
            table.setLengths(index, SlotLengths(repeating: 0, count: valueCount))
        } else {
            table.remove(at: index)
        }
    }

    /// Drops an entry whose values are missing or damaged: a miss, never an error.
    mutating func dropDamagedEntry(_ index: Int) {
        let key = table.key(at: index)
        if table[index].isReadable { changes.record(key: key, kind: .removed) }
        journal.append(.remove, key: key)
        forgetEntryDeletingValues(index)
        noteRemovedLines(1, evicted: false)
        try? journal.flush(operation: .droppingDamagedEntry, key: key)
    }
}
