import Dispatch

extension DiskLRUCache {
    /// Runs eviction and journal maintenance (``CacheState/runCleanup()``) on the cache's serial
    /// background queue, as the Java cache's cleanup task does, then compacts packed segments
    /// if enough garbage piled up. Operations claim the work with ``CacheState/claimCleanup()``
    /// under the lock, so at most one pass is queued at a time.
    func scheduleCleanup() {
        cleanupQueue.async { [weak self] in
            guard let self else { return }
            if self.options.sharing.isShared {
                self.cleanUpSharedDirectory(evenIfNotDue: false)
            } else {
                self.rebuildJournal { $0.runCleanup() }
            }
            // Failures (a closed cache, a full disk) leave the garbage for a later pass.
            if self.options.compactsInBackground { try? self.compactSegments(untilClean: false) }
            // Once compaction made room again, the space for the next full disk is set aside.
            self.spaceReserve?.ensure(liveBytes: self.storage.compactingStorage?.liveBytes ?? 0)
        }
    }

    /// Rebuilds the journal if `begin` (under the lock) starts a rebuild. The journal is written
    /// without the cache lock, which each batch of entries takes to be copied: operations go
    /// on, and what they journal meanwhile follows the snapshot. Returns whether a rebuild was
    /// swapped in.
    @discardableResult
    func rebuildJournal(beginningWith begin: (inout CacheState) -> JournalRebuild?) -> Bool {
        rebuildGate.withLock { _ in
            guard let rebuild = withState(begin) else { return false }
            let written = rebuild.write(with: cacheDirectory.fileSystem) { records in
                withState { $0.compactJournalBatch(of: records) }
            }
            return withState { $0.finishJournalRebuild(rebuild, written: written) }
        }
    }

    /// The cleanup pass of a directory other processes write too: eviction, and the journal
    /// rebuilt in one hold of the state and of the operation lock (the others' lines must not
    /// land in a journal being replaced). A failure leaves the work for the next pass.
    func cleanUpSharedDirectory(evenIfNotDue: Bool) {
        withState { state in
            guard !state.isClosed, (try? state.enterExclusive()) != nil else { return }
            if let rebuild = state.runCleanup() {
                // Written in this hold instead, from the index the catch-up brought up to date.
                _ = state.finishJournalRebuild(rebuild, written: false)
                try? state.rebuildJournal()
            } else if evenIfNotDue && (state.redundantOpCount > 0 || state.journal.linesSinceRewrite > 0) {
                try? state.rebuildJournal()
            }
        }
    }

    /// Blocks until the cleanup work queued so far has run. For tests and benchmarks: it
    /// replaces any need to sleep.
    package func waitForBackgroundWork() {
        cleanupQueue.sync {}
    }

    /// Reclaims now the space that replaced, removed and evicted values hold in packed
    /// storage: the live records of every segment with garbage are copied to the active
    /// segment and the old segments deleted. Then, in either storage, the journal is rewritten
    /// without the lines that no longer describe an entry. The cache does both by itself in the
    /// background once garbage outgrows half the live bytes and redundant lines outnumber the
    /// entries; call this before measuring or archiving a directory.
    ///
    /// Readers and writers go on meanwhile: the lock is held for one record copy at a time.
    ///
    /// - Throws: ``CacheError/Code/readOnly``, ``CacheError/Code/cacheClosed``, the I/O errors
    ///   of writing the segment or the journal (the segment being compacted then stays),
    ///   ``CacheError/Code/journalUnavailable`` when a journal an earlier failure broke still
    ///   cannot be rebuilt.
    public func compact() throws {
        guard !options.isReadOnly else { throw CacheError.readOnly(operation: .compact) }
        // A journal broken by an earlier failure is rebuilt first, or the call says why not.
        try locked(operation: .compact) { try $0.ensureJournalWritable(operation: .compact, key: nil) }
        try CacheError.reporting(.compact) { try compactSegments(untilClean: true) }
        if options.sharing.isShared {
            cleanUpSharedDirectory(evenIfNotDue: true)
        } else {
            rebuildJournal { $0.beginJournalRebuild(evenIfNotDue: true) }
        }
        // A rebuild that could not be written leaves the old journal, and its failure, if any.
        if let failure = withState({ $0.journal.failure }) { throw failure.reported(by: .compact) }
    }

    /// Compacts segments, the one with the most garbage first, while compaction is due (or,
    /// `untilClean`, while any segment holds garbage, at most once per segment that exists;
    /// `whileOverdue`, only while writers must wait for it).
    func compactSegments(untilClean: Bool, whileOverdue: Bool = false) throws {
        guard let compacting = storage.compactingStorage else { return }
        // One compaction at a time (the background one, or an explicit `compact()`).
        try compactionGate.withLock { passes in
            passes += 1
            try compactSegments(in: compacting, untilClean: untilClean, whileOverdue: whileOverdue)
        }
    }

    /// Backpressure for writers of a directory within its budget (``SizeBudget``): when the
    /// background compaction fell so far behind that garbage is half a segment past what it
    /// allows, the write that finds it compacts on its own thread, with no lock of the cache
    /// held, until garbage is back under that bound (waiting first for a compaction running).
    /// A cache written faster than compaction reclaims then writes at the pace it reclaims,
    /// rather than growing its directory.
    func reclaimOverdueGarbage() {
        guard let compacting = storage.compactingStorage, compacting.isCompactionOverdue else { return }
        try? compactSegments(untilClean: false, whileOverdue: true)
    }

    private func compactSegments(in compacting: any CompactingStorage, untilClean: Bool, whileOverdue: Bool) throws {
        // Each pass deletes one segment: as many passes as there are segments now (and one
        // more, for the active one sealed on the way) end any garbage there is now.
        let limit = compacting.sharedFileCount + 1
        var passes = 0
        defer { compacting.releaseClaims() }
        while passes < limit {
            passes += 1
            // Outside groups (here and for each copy): a segment a group is being synced in
            // is never chosen, and no copy lands after a record the log must still read back.
            let victim = try outsideGroups {
                try locked(operation: .compact) { _ -> UInt32? in
                    guard untilClean || (whileOverdue ? compacting.isCompactionOverdue : compacting.needsCompaction)
                    else { return nil }
                    // Sharing: a segment another cache appends to is passed by (and then left
                    // out of the candidates until that cache moves on to a new segment).
                    while let candidate = compacting.compactionCandidate(sealingActive: untilClean) {
                        if compacting.claimForCompaction(candidate) { return candidate }
                    }
                    return nil
                }
            }
            guard let victim else { return }
            do {
                try compact(segment: victim, in: compacting)
            } catch  where SpaceReserve.isNoSpace(error) && spaceReserve?.release() == true {
                // A full disk: the reserve holds the room to copy one segment's records out.
                try compact(segment: victim, in: compacting)
            }
        }
    }

    /// Copies the live records of `segment` out, one lock hold per record, then deletes it.
    private func compact(segment: UInt32, in compacting: any CompactingStorage) throws {
        var cursor: Int? = 0
        while let start = cursor {
            let batch = try locked(operation: .compact, access: .reads) { state in
                state.recordsToMove(from: segment, cursor: start, limit: 512)
            }
            for move in batch.records {
                // Read outside the lock; an I/O failure (not damage) stops this segment's compaction.
                let record = try compacting.readRecord(key: move.key, location: move.location, lengths: move.lengths)
                try outsideGroups {
                    try locked(operation: .compact, key: move.key) { state in
                        try state.moveRecord(move, record: record, in: compacting)
                    }
                }
            }
            cursor = batch.next
        }
        try outsideGroups {
            try locked(operation: .compact) { state in
                try state.finishCompaction(of: segment, in: compacting)
            }
        }
    }
}
