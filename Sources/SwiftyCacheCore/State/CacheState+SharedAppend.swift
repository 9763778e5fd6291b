/// A set in a shared directory (``DiskLRUCache/Sharing/processes``) that appends its journal
/// line under the operation lock held *shared*: the sets of any number of caches, in any
/// number of processes, append at once, each line one `write` with `O_APPEND`, which the
/// system keeps whole and in one place (local file systems hold the file's lock for a whole
/// `write`; a network file system promises less, and this mode, whose locks are `flock`s, is
/// not meant for one). Everything that reads the whole index or replaces
/// bytes (an eviction, a removal, a batch, a compaction step, a rebuild, an open) still takes
/// the lock exclusively, and waits for the appenders to leave.
///
/// The hold is: the lock taken shared, two loads of the shared page (the journal is still the
/// one this cache follows, its last exclusive holder left in order), the appender counted, the
/// line's `write` (and its sync, with `syncsWrites`), the journal's end raised in the page, the
/// count of changes moved, the appender uncounted, the lock released. Then, as a set whose
/// exclusive hold deferred its catch-up (``applyDeferredLines()``), the others' lines before
/// this one are applied, then the set.
///
/// What a killed appender leaves: a torn start of a line that the next appender's whole line
/// may follow (replays find the whole line: ``JournalParser/joinedLineStart(in:)``), or a whole
/// line past the journal's end the page records, and the appender still counted. An exclusive
/// holder that finds it counted looks at the journal itself, cuts a torn tail and uncounts it.
extension CacheState {
    /// How a set of a cache that shares its directory goes on once its record is appended.
    enum SharedSet {
        /// The directory is not shared, or this hold already holds the operation lock.
        case notShared
        /// Committed under the shared lock, and in the index.
        case committed
        /// The operation lock is held exclusively now; the record, when it was appended
        /// before the lock, is at the location.
        case exclusive(ValueLocation?)
    }

    /// A whole-entry set of a sharing cache: its record appended to this cache's own segment
    /// before any lock, then its line appended under the shared lock when nothing asks for the
    /// exclusive one (``mayAppendAlongsideOthers(key:at:lengths:)``), else the exclusive lock
    /// taken (``enterExclusive()``) with the catch-up deferred, as before this protocol.
    ///
    /// - Throws: ``CacheError/Code/editInProgress`` when this cache edits the key; the errors of
    ///   the record's append, of taking the lock, and of the line's write and sync.
    mutating func setSharing(
        _ packed: any RecordStorage, key: String, lengths: SlotLengths, record: [UInt8]
    ) throws(CacheError) -> SharedSet {
        guard isShared, !holdsOperationLock else { return .notShared }
        // (Only this cache edits its entries: the others' edits never show in this index.)
        let existing = table.index(of: key)
        if let existing, table[existing].isBeingEdited {
            throw CacheError.editInProgress(key: key, operation: .setData)
        }
        let location = try packed.appendBeforeOperationLock(record, key: key)
        if let location, let lock = sharedLock, mayAppendAlongsideOthers(key: key, at: existing, lengths: lengths),
            try appendAlongsideOthers(
                lock, key: key, lengths: lengths, location: location, recordSize: Int64(record.count))
        {
            return .committed
        }
        defersCatchUp = true
        defer { defersCatchUp = false }
        try enterExclusive()
        return .exclusive(location)
    }

    /// Whether a set of `key` may append under the shared lock: the journal is whole and this
    /// cache follows it, no pin waits to be written, the values it replaces are records, and
    /// by what this cache knows the set does not take the directory past its budget (an
    /// eviction reads the whole index: exclusive). What the others set meanwhile is found
    /// after the append (``appendAlongsideOthers(_:key:lengths:location:recordSize:)``).
    private mutating func mayAppendAlongsideOthers(key: String, at existing: Int?, lengths: SlotLengths) -> Bool {
        journal.adoptDeferredFailure()
        guard journal.failure == nil, !journal.logsRecords, journal.fd >= 0, sharedView != nil,
            deferredCatchUpEnd == nil, pinsGeneration == pinsDurableGeneration
        else { return false }
        if let existing, table[existing].isReadable,
            storage.keepsFiles(location: table[existing].location, lengths: table[existing].lengths)
        {
            return false
        }
        let (values, overflow) = size.addingReportingOverflow(lengths.total ?? 0)
        guard !overflow else { return false }
        let charged = budget.chargedSize(
            values: values, entries: table.count &+ 1, keyBytes: table.keyBytes &+ key.utf8.count)
        return charged <= budget.limit(maxSize: maxSize)
    }

    /// The shared hold of a set (see the extension's overview). Returns `false`, holding no
    /// lock and having written nothing, when the page says the exclusive lock is needed: the
    /// journal was rebuilt since this cache looked, or its last exclusive holder did not leave
    /// in order.
    ///
    /// A line that cannot be written or synced fails the set as an exclusive hold does: the
    /// key keeps the value it had (the set was not applied yet, and its record is garbage), and
    /// the page tells the next exclusive holder to look at the journal itself.
    ///
    /// - Complexity: four system calls (two `flock`s, a `write`, an `lseek`), then the others'
    ///   lines before this one read with one `pread` when there are any.
    private mutating func appendAlongsideOthers(
        _ lock: SharedDirectoryLock, key: String, lengths: SlotLengths, location: ValueLocation, recordSize: Int64
    ) throws(CacheError) -> Bool {
        try lock.lockOperation(in: directory, shared: true)
        guard lock.admitAppender(replacements: seenJournalReplacements) else {
            lock.unlockOperation(using: fileSystem)
            return false
        }
        journal.append(.clean(lengths: lengths, location: location), key: key)
        let line: Range<Int64>
        do {
            line = try journal.appendAlongsideOthers(operation: .commit, key: key)
        } catch {
            failAppend(lock, written: nil)
            throw error
        }
        do {
            try journal.syncIfDurable(operation: .commit, key: key, includesDirectory: false)
        } catch {
            failAppend(lock, written: line)
            throw error
        }
        lock.leaveAppending(journalEnd: line.upperBound)
        lock.unlockOperation(using: fileSystem)
        // The others' lines before this one, then this one (CacheState+DeferredCatchUp).
        deferredCatchUpEnd = line.lowerBound
        deferredOwnCommit = DeferredOwnCommit(key: key, lengths: lengths, location: location, recordSize: recordSize)
        if applyDeferredLines() {
            sharedView?.noteOwnLines(upTo: line.upperBound)
        } else {
            // (A torn line of a killed writer just before this one, say): replayed whole next.
            forgetSharedView()
        }
        // Others' sets this cache did not know of took the directory past its budget: evicted
        // now, under the exclusive lock (released as the hold ends).
        if isOverBudget, (try? enterExclusive()) != nil { try? trimToSize() }
        return true
    }

    /// A shared hold whose line could not be written (`written` is `nil`) or synced: the
    /// appender leaves the at-work mark and the lock; a line written and not synced is skipped
    /// by this cache, after the others' lines before it. The key keeps the value it had, which
    /// the rebuild the broken journal asks for writes again (as a failed packed commit goes
    /// back to the record it replaced: `CacheState+FailedCommit.swift`).
    private mutating func failAppend(_ lock: SharedDirectoryLock, written: Range<Int64>?) {
        lock.leaveAppending(journalEnd: nil)
        lock.unlockOperation(using: fileSystem)
        if let written {
            deferredCatchUpEnd = written.lowerBound
            if applyDeferredLines() {
                sharedView?.noteOwnLines(upTo: written.upperBound)
            } else {
                forgetSharedView()
            }
        }
    }
}
