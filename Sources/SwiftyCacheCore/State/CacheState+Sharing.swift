#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// A directory that several caches write (``DiskLRUCache/Sharing/processes``): opening beside
/// the others, the operation lock taken for one hold of the state, and what the others
/// journaled applied to the index before anything is decided.
///
/// The index of every sharing cache is the journal replayed: each one applies the others'
/// lines in the journal's order before it writes (under the operation lock) and before it
/// reads (without it), so a decision is always made over the directory as it is.
extension CacheState {
    /// Whether other caches may write the directory too.
    var isShared: Bool { sharedLock != nil }

    /// Opens the directory beside the caches that have it open: the one that finds none
    /// recovers it as a single writer would (repairs, sweep); the others replay the journal
    /// as it is and touch nothing.
    ///
    /// - Throws: The errors of ``recover()``, and ``CacheError/Code/directoryLocked`` when a
    ///   single-process writer has the directory open.
    mutating func openShared() throws(CacheError) -> RecoveryReport {
        try directory.create()
        let (lock, isAlone) = try SharedDirectoryLock.acquire(in: directory)
        sharedLock = lock
        holdsOperationLock = true
        lock.countRebuildOfDeadHolder()
        let report: RecoveryReport
        do {
            if isAlone {
                report = try recover()
                if journal.logsRecords {
                    // A single writer's log: the others would not know its tail. Rewritten as
                    // a packed journal; every commit here syncs its journal line.
                    journal.logsRecords = false
                    try rebuildJournal()
                }
            } else {
                report = RecoveryReport()
                try loadSharedJournal()
                try catchUpWithOthers(cutsTornTail: true)
            }
            // The journal was looked at whole: an appender a crash left counted is gone.
            lock.forgetDeadAppenders()
            try lock.finishOpening(isAlone: isAlone, in: directory)
            try followOwnJournal()
            isCaughtUpInHold = true
        } catch {
            closeAsCrash()
            throw error
        }
        leaveExclusive()
        return report
    }

    /// Takes the operation lock for the rest of this hold of the state (``leaveExclusive()``
    /// releases it) and applies what the others journaled since this cache last looked,
    /// cutting off a line a killed writer tore. Every change of the directory happens after it.
    ///
    /// - Throws: ``CacheError/Code/directoryLocked`` when another cache's operation held the
    ///   lock for ``SharedDirectoryLock/longestWait``, or the errors of reading the journal.
    mutating func enterExclusive() throws(CacheError) {
        guard let lock = sharedLock, !holdsOperationLock, !isClosed else { return }
        try lock.lockOperation(in: directory)
        holdsOperationLock = true
        do {
            // (A holder that died inside the lock: the handover is not trusted either.)
            let followsDeadHolder = lock.countRebuildOfDeadHolder()
            if try followsDeadHolder ? true : !catchUpAsHandedOver(lock) {
                try catchUpWithOthers(cutsTornTail: true)
                lock.forgetDeadAppenders()
                seenJournalReplacements = lock.page?.load(SharedDirectoryLock.Word.journalReplacements.rawValue)
            }
        } catch {
            leaveExclusive()
            throw error
        }
        isCaughtUpInHold = true
        lock.markAtWork()
        journalGenerationAtEntry = journal.generation
    }

    /// The catch-up the shared page allows, under the operation lock: when the last holder
    /// left it in order and nobody rebuilt the journal since this cache last looked, the
    /// others' lines are read up to where the page says the journal ends, and nothing else is
    /// looked at (no torn tail can follow a holder that left in order). Returns `false` when
    /// the journal itself must be looked at (``catchUpWithOthers(cutsTornTail:looksAtJournal:)``).
    ///
    /// - Complexity: no system call when nothing changed; one `pread` of the others' lines.
    private mutating func catchUpAsHandedOver(_ lock: SharedDirectoryLock) throws(CacheError) -> Bool {
        guard let handover = lock.handover(), handover.journalReplacements == seenJournalReplacements,
            var view = sharedView, handover.journalEnd >= view.applied
        else { return false }
        if handover.journalEnd > view.applied, defersCatchUp {
            // A set: the others' lines are applied once the lock is released.
            deferredCatchUpEnd = handover.journalEnd
        } else if handover.journalEnd > view.applied {
            let end = view.catchUp(fileSystem: fileSystem, upTo: handover.journalEnd) { key, operation in
                applyOthersLine(key, operation)
            }
            sharedView = view
            noteGarbage()
            guard end == handover.journalEnd else { return false }
        }
        seenChangeCount = handover.changeCount
        journal.noteSize(handover.journalEnd)
        return true
    }

    /// Releases the operation lock, once this cache's own lines are written: the view of the
    /// journal moves past them (they are in the index already), and the shared page tells the
    /// next holder where the journal ends (only when this hold caught up and no append failed:
    /// otherwise the next holder looks at the journal itself). A set's hold that deferred its
    /// catch-up applies the others' earlier lines and then the set after the lock is released
    /// (``applyDeferredLines()``), and only then moves the view past its own line.
    mutating func leaveExclusive() {
        guard holdsOperationLock, let lock = sharedLock else { return }
        // Pins this hold changed (a pinned entry removed or evicted) are written under the lock.
        if pinsGeneration != pinsDurableGeneration, !isReadOnly {
            _ = try? writePinsIfShared(claimPinsToWrite())
        }
        try? journal.flush(operation: .commit)
        let replaced = journal.generation != journalGenerationAtEntry
        var journaled = false
        var end: Int64?
        var ownEnd: Int64?
        let deferred = deferredCatchUpEnd
        if journal.fd >= 0 {
            let before = deferred ?? sharedView?.applied
            if replaced {
                // This cache rebuilt the journal (after the deferred lines: see `rebuildJournal`):
                // the view follows the new one.
                try? followOwnJournal()
            } else if let size = ownJournalEnd() {
                ownEnd = size
                if deferred == nil { sharedView?.noteOwnLines(upTo: size) }
            }
            let after = deferred == nil ? sharedView?.applied : ownEnd
            journaled = after != before
            if isCaughtUpInHold, journal.failure == nil { end = after }
        }
        // The others' next reads look when this hold journaled something.
        if let left = lock.leave(journalEnd: end, journaled: journaled, replacedJournal: replaced), isCaughtUpInHold {
            seenChangeCount = left.changeCount
            seenJournalReplacements = left.replacements
        }
        isCaughtUpInHold = false
        holdsOperationLock = false
        lock.unlockOperation(using: fileSystem)
        // A set's catch-up, after the lock (CacheState+DeferredCatchUp): its own lines follow.
        if deferred != nil {
            if !applyDeferredLines() {
                forgetSharedView()
            } else if let ownEnd {
                sharedView?.noteOwnLines(upTo: ownEnd)
            }
        }
    }

    /// Where the journal ends after this hold's appends: the size the writer kept (noted at
    /// the catch-up, plus what it appended), or the file's when that is unknown or behind.
    private func ownJournalEnd() -> Int64? {
        if let known = journal.knownSize, known >= (sharedView?.applied ?? 0) { return known }
        return try? fileSystem.status(of: journal.fd).size
    }

    /// Applies what the others journaled since this cache last looked: the lines appended
    /// (O(their bytes)), or, when another cache rebuilt the journal, the new one replayed
    /// whole (O(entries)), recorded as one `cleared` change. With `cutsTornTail` (under the
    /// operation lock), bytes after the last whole line are a torn append and are cut off.
    ///
    /// - Complexity: an atomic load when nothing changed (an `fstat` under the lock).
    ///
    /// A read first compares the shared count of changes (``SharedDirectoryLock/Word/changeCount``), which a writer
    /// bumps before its operation returns: nothing journaled since, nothing to do (no system
    /// call). With `cutsTornTail` (under the operation lock), or `looksAtJournal` (the watcher,
    /// woken by a line written a moment before its count), the journal itself is looked at:
    /// a writer killed after its line and before its count leaves a line the count misses.
    mutating func catchUpWithOthers(cutsTornTail: Bool, looksAtJournal: Bool = false) throws(CacheError) {
        guard isShared, !isClosed else { return }
        let fileSystem = fileSystem
        let count = sharedLock?.changeCount
        if !cutsTornTail && !looksAtJournal, let count, count == seenChangeCount { return }
        // (A rebuild renames the new journal over the old one in one step, unlinking it: the
        // link count the look reads tells, and a kill cannot leave the old one linked.)
        if var view = sharedView {
            switch view.look(fileSystem: fileSystem) {
            case .unchanged:
                seenChangeCount = count
                // The writer's size, which this hold's appends add to (see `leaveExclusive`).
                if cutsTornTail { journal.noteSize(view.applied) }
                return
            case .replaced:
                try reloadSharedJournal()
            case .appended:
                let end = view.catchUp(fileSystem: fileSystem) { key, operation in
                    applyOthersLine(key, operation)
                }
                sharedView = view
                if end == nil { try reloadSharedJournal() }
                noteGarbage()
            }
        } else {
            try reloadSharedJournal()
        }
        seenChangeCount = count
        guard cutsTornTail, let view = sharedView, let size = try? fileSystem.status(of: view.fd).size else { return }
        if view.applied < size {
            try journal.cutTornTail(at: view.applied)
        } else {
            journal.noteSize(size)
        }
    }

    /// Replays the journal another cache replaced, and tells observers to read again.
    private mutating func reloadSharedJournal() throws(CacheError) {
        try loadSharedJournal()
        var change = CacheChange(key: nil, kind: .cleared)
        change.isFromAnotherCache = true
        changes.record(change)
    }

    /// Replays the journal as it is into an empty index, with no repair: entries another
    /// cache is editing keep their committed values, lines a killed writer left unfinished are
    /// not read. The view follows the file replayed, and the writer appends to it.
    ///
    /// - Complexity: O(entries).
    mutating func loadSharedJournal() throws(CacheError) {
        guard let (opened, status) = try openJournalForReading() else {
            throw CacheError.ioFailure(
                SystemCallFailure(call: "open", errno: Errno.noEntry), operation: .open, path: directory.journalPath)
        }
        table.removeAll()
        size = 0
        var removedKeys: Set<String> = []
        let (summary, consumed) = try replayOpenedJournal(opened, status: status, removedKeys: &removedKeys)
        if summary.corruption != nil || summary.firstLine != .packedMagic {
            try? fileSystem.close(opened.fd)
            table.removeAll()
            throw CacheError.notACacheDirectory(
                path: opened.path, reason: summary.corruption?.description ?? "it is not a packed journal")
        }
        _ = dropEntriesNamed(byDamagedLines: summary.damagedLines, removedKeys: &removedKeys)
        for index in table.indicesBeingEdited {
            if table[index].isReadable { table.setEditor(index, 0) } else { table.remove(at: index) }
        }
        size = committedTotal() ?? 0
        redundantOpCount = max(0, summary.recordCount - table.count)
        storage.compactingStorage?.relearn(table: table)
        sharedView?.close(fileSystem: fileSystem)
        sharedView = SharedJournalView(
            fd: opened.fd, identity: status.identity, applied: consumed - Int64(summary.unterminatedByteCount),
            parser: SharedJournalView.bodyParser(
                appVersion: journal.appVersion, valueCount: valueCount, format: journal.format))
        if journal.fd < 0 || (try? fileSystem.status(of: journal.fd))?.identity != status.identity {
            try journal.reopenForAppending()
        }
        // Another cache's first batch rewrote the journal under the batch magic: kept.
        if let header = try? directory.journalHeader(), header.marksBatches { journal.marksBatches = true }
        noteGarbage()
    }

    /// Follows the journal this cache just wrote (opened, or rebuilt): everything in it is in
    /// the index.
    private mutating func followOwnJournal() throws(CacheError) {
        let path = directory.journalPath
        let fd: Int32
        let status: FileStatus
        do {
            fd = try fileSystem.open(path, flags: OpenFlags.readOnly, mode: 0)
            status = try fileSystem.status(of: fd)
        } catch {
            throw CacheError.ioFailure(error, operation: .open, path: path)
        }
        sharedView?.close(fileSystem: fileSystem)
        sharedView = SharedJournalView(
            fd: fd, identity: status.identity, applied: status.size,
            parser: SharedJournalView.bodyParser(
                appVersion: journal.appVersion, valueCount: valueCount, format: journal.format))
    }

    /// Applies one line another cache journaled, keeping the sizes and the storage's
    /// accounting as this cache's own operations do. A `DIRTY` changes nothing here: the
    /// entry keeps its committed values until the other cache's `CLEAN` or `REMOVE`.
    ///
    /// - Complexity: O(1).
    mutating func applyOthersLine(_ key: UnsafeBufferPointer<UInt8>, _ operation: Journal.Operation) {
        let tag = table.tag(of: key)
        let index = table.index(ofKey: key, tag: tag)
        let before = index.flatMap { index in
            table.readableLengths(index).map { (location: table.location(index), lengths: $0) }
        }
        guard let packed = storage.compactingStorage else { return }
        func recordSize(_ lengths: SlotLengths) -> Int64 { packed.recordSize(lengths: lengths) }
        var removedKeys: Set<String> = []
        switch operation {
        case .read, .tail:
            replay(key, tag: tag, operation, removedKeys: &removedKeys)
        case .dirty:
            return
        case .move(let location):
            guard let index, let before else { return }
            let bytes = recordSize(before.lengths)
            packed.noteOthersRelease(at: before.location, size: bytes)
            packed.noteOthersRecord(at: location, size: bytes, replacing: nil)
            table.setLocation(index, location)
            redundantOpCount += 1
        case .clean(let lengths, let location):
            if let before { size -= (before.lengths.total ?? 0) }
            // An edit of this cache in progress stays this cache's: it commits over this.
            let editing = index.map { table[$0] }.flatMap { $0.isBeingEdited ? $0 : nil }
            replay(key, tag: tag, operation, removedKeys: &removedKeys)
            if let index = table.index(ofKey: key, tag: tag) {
                table.setCommitted(index, lengths: lengths, location: location, sequenceNumber: nextSequenceNumber)
                nextSequenceNumber &+= 1
                if let editing {
                    table.setEditor(index, editing.editorID)
                    table.setDirtyJournaled(index, editing.isDirtyJournaled)
                }
            }
            let (sum, overflow) = size.addingReportingOverflow(lengths.total ?? 0)
            size = overflow ? Int.max : sum
            packed.noteOthersRecord(
                at: location, size: recordSize(lengths),
                replacing: before.map { ($0.location, recordSize($0.lengths)) })
            noteSupersededLine(replacing: before != nil)
            // (The key's `String` only for someone who observes.)
            if changes.isObserved {
                var change = CacheChange(key: String(decoding: key, as: UTF8.self), kind: .committed)
                change.isFromAnotherCache = true
                changes.record(change)
            }
        case .remove:
            guard let index else { return }
            let isObserved = changes.isObserved
            var change = CacheChange(key: isObserved ? String(decoding: key, as: UTF8.self) : nil, kind: .removed)
            change.isFromAnotherCache = true
            if let before {
                // For a layer above that names its keys in the values (read before the record
                // can be compacted away), while someone observes.
                if changes.isObserved, let name = change.key {
                    change.formerFirstValue = formerFirstValue(
                        key: name, location: before.location, lengths: before.lengths)
                }
                size -= (before.lengths.total ?? 0)
                packed.noteOthersRelease(at: before.location, size: recordSize(before.lengths))
            }
            if table[index].isBeingEdited {
                // This cache's edit goes on, as over a key never committed.
                table.setReadable(index, false)
                table.setLengths(index, SlotLengths(repeating: 0, count: valueCount))
            } else {
                table.remove(at: index)
            }
            redundantOpCount += 1
            if isObserved { changes.record(change) }
        }
    }
}
