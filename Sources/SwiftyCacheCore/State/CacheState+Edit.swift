/// The edit transaction: reserving a key for an editor, publishing its staged values with the
/// journal lines that make them durable, and abandoning it. Each method decides and records
/// everything (index, sizes, journal lines, victims) under the cache lock; the staging of
/// values happens before, outside the lock.
extension CacheState {
    /// Marks `key` as being edited, journals `DIRTY` and returns the editor's ID; `nil` when
    /// another editor holds the key, or when the entry changed since `expectedSequenceNumber`
    /// (snapshot edits).
    ///
    /// `DIRTY` reaches the journal file before any value is staged, as the Java cache does: a
    /// crash from then on leaves a `DIRTY` line without its end, and the next open, by this
    /// cache or the Java one, deletes the key's files (staged and committed) rather than trust
    /// them. The previous value of the key is lost in that case, never mixed with a new one.
    ///
    /// - Throws: ``CacheError/Code/entryNotFound`` when `requiresEntry` and there is no
    ///   committed entry; ``CacheError/Code/readOnly``, ``CacheError/Code/foreignFile``; the
    ///   journal's errors.
    ///
    /// Without `journalsDirty` (a one-shot write that stages nothing on disk: packed storage's
    /// small values), no `DIRTY` line is written and the entry is not touched: a crash before
    /// the commit's `CLEAN` leaves the previous entry as it was, in memory as on disk.
    mutating func reserveEdit(
        key: String, expectedSequenceNumber: UInt64?, requiresEntry: Bool, journalsDirty: Bool = true
    ) throws(CacheError) -> UInt64? {
        try checkWritable(key: key, operation: .edit)
        let existing = table.index(of: key)
        if let expectedSequenceNumber {
            guard let existing, table[existing].isReadable, table[existing].sequenceNumber == expectedSequenceNumber
            else { return nil }
        }
        if requiresEntry {
            guard let existing, table[existing].isReadable else {
                throw CacheError.entryNotFound(
                    key: key, operation: .setPartialData,
                    message: "no entry to update; a new entry needs a value in every slot (use setData)")
            }
        }
        if let existing, table[existing].isBeingEdited { return nil }
        try ensureJournalWritable(operation: .edit, key: key)
        let index = existing ?? table.insert(key: key, valueCount: valueCount)
        let editorID = nextEditorID
        nextEditorID += 1
        table.setEditor(index, editorID)
        // An entry with values in files loses them when the commit publishes (packed storage
        // deletes a file whose slot moves into the record): then DIRTY must come first too.
        let replacesFiles =
            table[index].isReadable
            && storage.keepsFiles(location: table[index].location, lengths: table[index].lengths)
        guard journalsDirty || replacesFiles else { return editorID }
        table.setDirtyJournaled(index, true)
        table.touch(index)
        journal.append(.dirty, key: key)
        do {
            try journal.flush(operation: .edit, key: key)
        } catch {
            releaseEditor(at: index)
            throw error
        }
        return editorID
    }

    /// Publishes an edit's staged values and journals `CLEAN`, evicting least recently used
    /// entries if the cache is now over its limit (their `REMOVE` lines go out in the same
    /// write as the `CLEAN` line).
    ///
    /// - Throws: ``CacheError/Code/cacheClosed``, ``CacheError/Code/editorDetached``,
    ///   ``CacheError/Code/incompleteEntry``, ``CacheError/Code/journalUnavailable`` or
    ///   ``CacheError/Code/ioFailure``. After a failure the entry holds its previous values or,
    ///   if some were already replaced, is removed: it never holds a mix.
    /// - Complexity: O(1) plus the storage's publish, and O(victims) when evicting.
    mutating func completeEdit(key: String, editorID: UInt64, staged: [StagedSlot?]) throws(CacheError) {
        guard !isClosed else {
            discardStaged(key: key, staged: staged)
            throw CacheError.closedWhileEditing(key: key)
        }
        guard let index = table.index(of: key), table[index].editorID == editorID else {
            discardStaged(key: key, staged: staged)
            throw CacheError.editorDetached(key: key)
        }
        if !table[index].isReadable, let missing = staged.firstIndex(where: { $0 == nil }) {
            abortEdit(at: index, staged: staged)
            throw CacheError.incompleteEntry(key: key, missingSlot: missing)
        }
        do {
            try ensureJournalWritable(operation: .commit, key: key)
        } catch {
            discardStaged(key: key, staged: staged)
            releaseEditor(at: index)
            throw error
        }
        let location: ValueLocation
        let replaced =
            table[index].isReadable
            ? CommittedValues(location: table[index].location, lengths: table[index].lengths) : nil
        do {
            location = try publish(key: key, staged: staged, at: index)
        } catch {
            if !error.publishedAny {
                // Nothing is published yet: the old values stand.
                abortEdit(at: index, staged: staged)
            } else {
                // Some slots already hold new values: drop the entry rather than serve a mix.
                // This editor lets go first, so the entry is dropped, not kept for it.
                discardStaged(key: key, staged: staged)
                table.setEditor(index, 0)
                table.setDirtyJournaled(index, false)
                dropDamagedEntry(index)
                // Old and new files of the key may both be left: the next open sweeps them.
                noteUndeletedFiles(of: key)
            }
            throw error.error
        }
        var lengths = table[index].lengths
        for slot in staged.indices {
            guard let value = staged[slot] else { continue }
            // Saturating: sizes come from real writes, but the total from a journal may be huge.
            let (grown, overflow) = size.addingReportingOverflow(value.length - lengths[slot])
            size = overflow ? Int.max : grown
            lengths[slot] = value.length
        }
        try recordCommit(at: index, key: key, lengths: lengths, location: location, replaced: replaced)
    }

    /// The second half of every commit, once the values are where `location` says: the index,
    /// the `CLEAN` line, evictions in the same journal write, the files the old values no longer
    /// need, and with `syncsWrites` the `fsync`s.
    ///
    /// A record logged in its segment (`isLogged`: the segment's sync made it durable) needs
    /// no sync of the journal.
    private mutating func recordCommit(
        at index: Int, key: String, lengths: SlotLengths, location: ValueLocation, replaced: CommittedValues?,
        renamedFiles: Bool = true, isLogged: Bool = false
    ) throws(CacheError) {
        noteSupersededLine(replacing: replaced != nil || table[index].isDirtyJournaled)
        let previous = replaced.map { PreviousValues(values: $0, sequenceNumber: table.sequenceNumber(index)) }
        table.setCommitted(index, lengths: lengths, location: location, sequenceNumber: nextSequenceNumber)
        nextSequenceNumber += 1
        table.touch(index)
        journal.append(.clean(lengths: lengths, location: location), key: key)
        // A full cache evicts here, its REMOVE lines in the same journal write as the CLEAN
        // line and its files deleted after it, as the floor of set-plus-remove needs anyway.
        let victims = evictionVictims(limit: Self.inlineEvictionLimit, sparing: index)
        for victim in victims { journal.append(.remove, key: table.key(at: victim)) }
        do {
            try journal.flush(operation: .commit, key: key)
        } catch {
            // A packed record goes back to the one it replaced; anything else is forgotten (the
            // journal may hold DIRTY without CLEAN, which a reopen deletes), so that memory and
            // disk agree once the rebuild that repairs the journal writes memory. The victims
            // stay: that rebuild writes them.
            if let replaced, !storage.keepsFiles(location: replaced.location, lengths: replaced.lengths) {
                undoFailedCommit(key: key, previous: previous, announced: false)
                throw error
            }
            if let replaced, !storage.deleteReplacedFiles(key: key, old: replaced, location: location, lengths: lengths)
            {
                noteUndeletedFiles(of: key)
            }
            forgetEntryDeletingValues(index)
            if replaced != nil { changes.record(key: key, kind: .removed) }
            throw error
        }
        changes.record(key: key, kind: .committed)
        for victim in victims {
            changes.record(key: table.key(at: victim), kind: .evicted)
            forgetEntryDeletingValues(victim)
        }
        noteGarbage()
        if let replaced, !storage.deleteReplacedFiles(key: key, old: replaced, location: location, lengths: lengths) {
            noteUndeletedFiles(of: key)
        }
        noteRemovedLines(victims.count, evicted: true)
        statistics.evictionCount += victims.count
        do {
            if !isLogged { try journal.syncIfDurable(operation: .commit, key: key, includesDirectory: renamedFiles) }
        } catch {
            // Not known to be on stable storage: the caller is told, and the entry goes back to
            // the packed record it replaced, or is forgotten, so that it is not served as if it
            // were. The failed sync broke the journal: the rebuild that repairs it writes the
            // index as memory holds it, and until it succeeds every call that needs the journal
            // throws.
            undoFailedCommit(key: key, previous: previous, announced: true)
            throw error
        }
        statistics.writeCount += 1
    }

    /// Refuses a write of `key` in a read-only cache, or one that would replace a file the
    /// cache did not create.
    func checkWritable(key: String, operation: CacheError.Operation) throws(CacheError) {
        guard !isReadOnly else { throw CacheError.readOnly(operation: operation, key: key) }
        if !foreignKeys.isEmpty, foreignKeys.contains(key) {
            throw CacheError.foreignFile(key: key, path: storage.path(key: key, slot: 0, staged: false))
        }
    }

    /// A whole-entry write of small values in packed storage, in one lock hold: the record,
    /// encoded outside the lock, is appended, then journaled as any commit. No editor, no
    /// `DIRTY` line: a crash before the `CLEAN` line leaves the old entry as it was. Returns
    /// `false` when the edit transaction must run instead: an entry whose old values are files
    /// (``reserveEdit(key:expectedSequenceNumber:requiresEntry:journalsDirty:)`` journals
    /// `DIRTY` before a commit deletes them). A directory deleted underneath is recreated
    /// (``restoreVanishedDirectory()``) and the entry written anew.
    ///
    /// - Throws: ``CacheError/Code/editInProgress`` when an editor holds the key, and the
    ///   errors of a commit.
    /// - Complexity: one `write` of the record and one of the journal line.
    mutating func commitRecord(key: String, lengths: SlotLengths, record: [UInt8]) throws(CacheError) -> Bool {
        guard let packed = records else { return false }
        try checkWritable(key: key, operation: .setData)
        // Sharing, called without the operation lock: the record first, then the lock (shared
        // for the line alone, when nothing asks for more).
        let early: ValueLocation?
        switch try setSharing(packed, key: key, lengths: lengths, record: record) {
        case .committed: return true
        case .notShared: early = nil
        case .exclusive(let location): early = location
        }
        try settleDeferredLines(beforeSetOf: key, lengths: lengths)
        let existing = table.index(of: key)
        var replaced: CommittedValues?
        if let existing {
            let entry = table[existing]
            if entry.isBeingEdited { throw CacheError.editInProgress(key: key, operation: .setData) }
            if entry.isReadable {
                guard !storage.keepsFiles(location: entry.location, lengths: entry.lengths) else { return false }
                replaced = CommittedValues(location: entry.location, lengths: entry.lengths)
            }
        }
        try ensureJournalWritable(operation: .setData, key: key)
        let location: ValueLocation
        do {
            if let early { location = early } else { location = try packed.appendCommit(record, key: key) }
        } catch  where error.isDirectoryVanished {
            // Recreated here, and the entry written anew.
            guard try restoreVanishedDirectory() else { throw error }
            return try commitRecord(key: key, lengths: lengths, record: record)
        }
        if deferredCatchUpEnd != nil {
            // Sharing: the line now, the index after the lock, behind the others' earlier lines.
            try journalDeferredSet(key: key, lengths: lengths, location: location, recordSize: Int64(record.count))
            return true
        }
        packed.noteCommitted(location: location, size: Int64(record.count), replacing: replaced)
        let index = existing ?? table.insert(key: key, valueCount: valueCount)
        let oldTotal = replaced.map { $0.lengths.reduce(0, +) } ?? 0
        let (grown, overflow) = size.addingReportingOverflow(lengths.reduce(0, +) - oldTotal)
        size = overflow ? Int.max : grown
        // Nothing was renamed: the record went to a segment whose name is already durable.
        try recordCommit(
            at: index, key: key, lengths: lengths, location: location, replaced: replaced, renamedFiles: false,
            isLogged: journal.logsRecords)
        noteLoggedCommit()
        return true
    }

    /// Publishes through the storage. Packed storage appends to a segment it holds open, so a
    /// directory deleted underneath shows only now (file storage notices it while staging):
    /// the directory is recreated, as the facade does for file storage, and the edit goes on
    /// as the creation of a new entry (``CacheError/Code/incompleteEntry`` if it did not write
    /// every slot).
    private mutating func publish(key: String, staged: [StagedSlot?], at index: Int) throws(PublishFailure)
        -> ValueLocation
    {
        func committed() -> CommittedValues? {
            table[index].isReadable
                ? CommittedValues(location: table[index].location, lengths: table[index].lengths) : nil
        }
        do {
            return try storage.publish(key: key, staged: staged, committed: committed())
        } catch  where !error.publishedAny && error.error.isDirectoryVanished {
            do throws(CacheError) {
                guard try restoreVanishedDirectory() else { throw error.error }
            } catch {
                throw PublishFailure(error: error, publishedAny: false)
            }
            if let missing = staged.firstIndex(where: { $0 == nil }) {
                throw PublishFailure(
                    error: CacheError.incompleteEntry(key: key, missingSlot: missing), publishedAny: false)
            }
            return try storage.publish(key: key, staged: staged, committed: nil)
        }
    }

    /// Ends an edit without publishing it. An editor that no longer holds its entry (removed,
    /// or the cache closed) only has its staged values deleted.
    mutating func abandonEdit(key: String, editorID: UInt64, staged: [StagedSlot?]) {
        guard !isClosed, let index = table.index(of: key), table[index].editorID == editorID else {
            discardStaged(key: key, staged: staged)
            return
        }
        abortEdit(at: index, staged: staged)
    }

    /// Ends the edit of the entry at `index` without publishing it: deletes its staged values
    /// and journals the entry's state (`CLEAN` with the old lengths, or `REMOVE` for a new
    /// entry).
    mutating func abortEdit(at index: Int, staged: [StagedSlot?]) {
        let key = table.key(at: index)
        discardStaged(key: key, staged: staged)
        table.setEditor(index, 0)
        guard table[index].isDirtyJournaled else {
            // A one-shot write that never reached the journal: nothing to undo there.
            if !table[index].isReadable { table.remove(at: index) }
            return
        }
        table.setDirtyJournaled(index, false)
        redundantOpCount += 1
        if table[index].isReadable {
            // Replay treats the CLEAN line as a use; so does memory, so both orders agree.
            table.touch(index)
            journal.append(.clean(lengths: table[index].lengths, location: table[index].location), key: key)
        } else {
            table.remove(at: index)
            journal.append(.remove, key: key)
        }
        try? journal.flush(operation: .abort, key: key)
    }

    /// Frees the entry at `index` of its editor after the edit failed before anything was
    /// published; a new entry, never committed, is dropped.
    private mutating func releaseEditor(at index: Int) {
        table.setEditor(index, 0)
        table.setDirtyJournaled(index, false)
        if !table[index].isReadable { table.remove(at: index) }
    }

    /// Deletes an edit's staged values, best effort.
    mutating func discardStaged(key: String, staged: [StagedSlot?]) {
        if !storage.discard(key: key, staged: staged) { noteUndeletedFiles(of: key) }
    }
}
