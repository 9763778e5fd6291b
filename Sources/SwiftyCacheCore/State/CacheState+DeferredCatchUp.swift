/// A set in a shared directory catches up with the others after the operation lock, not
/// under it: the hold appends the set's line where the last holder said the journal ends, and
/// once the lock is released the lines the others appended before it are applied, then the
/// set itself, in the journal's order.
///
/// A set's line does not depend on those lines: it writes its key whatever the key held. What
/// the set changes in the index (the entry, the size, the segments' accounting, its change for
/// observers) does, and waits for them. Whatever reads the whole index under the lock (an
/// eviction, a journal rebuild) applies the others' lines first (``settleDeferredLines()``).
/// Two processes writing at once then parse each other's lines, and update their indexes,
/// while the other holds the lock.
extension CacheState {
    /// A set whose hold deferred the catch-up, journaled, not yet in the index.
    struct DeferredOwnCommit {
        var key: String
        var lengths: SlotLengths
        var location: ValueLocation
        var recordSize: Int64
    }

    /// Applies the deferred lines now, under the operation lock, when the set about to be
    /// journaled could evict (an eviction picks from the whole index) or the journal must be
    /// rebuilt first.
    mutating func settleDeferredLines(beforeSetOf key: String, lengths: SlotLengths) throws(CacheError) {
        guard deferredCatchUpEnd != nil else { return }
        let (values, overflow) = size.addingReportingOverflow(lengths.total ?? 0)
        let charged = budget.chargedSize(
            values: overflow ? Int.max : values, entries: table.count &+ 1, keyBytes: table.keyBytes &+ key.utf8.count)
        guard overflow || charged > budget.limit(maxSize: maxSize) || journal.failure != nil else { return }
        try settleDeferredLines()
    }

    /// Applies the deferred lines now, under the operation lock; when they cannot be read,
    /// catches up as a holder that found the page out of order does.
    mutating func settleDeferredLines() throws(CacheError) {
        guard deferredCatchUpEnd != nil else { return }
        if !applyDeferredLines() { try catchUpWithOthers(cutsTornTail: true) }
    }

    /// Journals a set whose hold deferred the catch-up: its line written (and synced, with
    /// `syncsWrites`) under the lock, its place in the index taken after the lock
    /// (``applyDeferredLines()``). A line that cannot be written or synced fails the set, after
    /// the others' lines: the key keeps the value it had (the set was not applied, and its
    /// record is garbage), which the rebuild the broken journal asks for writes again.
    mutating func journalDeferredSet(
        key: String, lengths: SlotLengths, location: ValueLocation, recordSize: Int64
    ) throws(CacheError) {
        journal.append(.clean(lengths: lengths, location: location), key: key)
        do {
            try journal.flush(operation: .commit, key: key)
            try journal.syncIfDurable(operation: .commit, key: key, includesDirectory: false)
        } catch {
            try? settleDeferredLines()
            throw error
        }
        deferredOwnCommit = DeferredOwnCommit(key: key, lengths: lengths, location: location, recordSize: recordSize)
    }

    /// Applies the others' lines a set's hold deferred, in order, then the set. Returns
    /// `false` when they could not all be read or parsed: the caller replays the journal
    /// (``forgetSharedView()`` after the lock), which holds the set too.
    ///
    /// - Complexity: O(bytes of the deferred lines), one `pread` for a few lines.
    @discardableResult
    mutating func applyDeferredLines() -> Bool {
        guard let end = deferredCatchUpEnd else { return true }
        deferredCatchUpEnd = nil
        let own = deferredOwnCommit
        deferredOwnCommit = nil
        guard var view = sharedView else { return false }
        let reached = view.catchUp(fileSystem: fileSystem, upTo: end) { key, operation in
            applyOthersLine(key, operation)
        }
        sharedView = view
        guard reached == end else { return false }
        if let own { applyOwnCommit(own) }
        noteGarbage()
        return true
    }

    /// Forgets the view of the journal, so that the next look replays it whole: after the
    /// deferred lines could not be read once the lock was released.
    mutating func forgetSharedView() {
        sharedView?.close(fileSystem: fileSystem)
        sharedView = nil
        seenChangeCount = nil
    }

    /// The set's part of a commit, behind the others' lines: the entry, the size, the
    /// segments' accounting, the change for observers. (Only this cache edits its entries, and
    /// it refused the set of a key it edits before it journaled it.)
    private mutating func applyOwnCommit(_ own: DeferredOwnCommit) {
        guard let packed = records else { return }
        let existing = table.index(of: own.key)
        var replaced: CommittedValues?
        if let existing, table[existing].isReadable {
            replaced = CommittedValues(location: table[existing].location, lengths: table[existing].lengths)
        }
        packed.noteCommitted(location: own.location, size: own.recordSize, replacing: replaced)
        let index = existing ?? table.insert(key: own.key, valueCount: valueCount)
        let oldTotal = replaced.map { $0.lengths.reduce(0, +) } ?? 0
        let (grown, overflow) = size.addingReportingOverflow(own.lengths.reduce(0, +) - oldTotal)
        size = overflow ? Int.max : grown
        noteSupersededLine(replacing: replaced != nil || table[index].isDirtyJournaled)
        table.setCommitted(index, lengths: own.lengths, location: own.location, sequenceNumber: nextSequenceNumber)
        nextSequenceNumber += 1
        table.touch(index)
        changes.record(key: own.key, kind: .committed)
        statistics.writeCount += 1
    }
}
