import Dispatch

/// Closing: a clean close (evict, flush, saved index, clean marker, lock released), the
/// end of a process that never closed, and a simulated crash.
extension CacheState {
    /// Aborts open editors, evicts down to `maxSize`, flushes and closes the journal, leaves the
    /// clean marker when nothing stray can be left, and releases the directory lock. Returns the
    /// first failure; the state is closed regardless.
    mutating func close() -> CacheError? {
        guard !isClosed else { return nil }
        if isReadOnly {
            let viewFileSystem = directory.fileSystem
            readOnlyView?.close(fileSystem: viewFileSystem)
            isClosed = true
            return nil
        }
        var failure: CacheError?
        // Sharing: what the close writes (evictions, lines) follows the others' lines.
        if isShared {
            do { try enterExclusive() } catch { failure = error }
        }
        // The editors' objects live on; their commit will throw `cacheClosed`. Every slot counts
        // as staged, so that anything an editor already wrote is deleted.
        let everySlot = [StagedSlot?](repeating: StagedSlot(length: 0), count: valueCount)
        for index in table.indicesBeingEdited {
            abortEdit(at: index, staged: everySlot)
        }
        do throws(CacheError) {
            try ensureJournalWritable(operation: .close, key: nil)
            try trimToSize()
            try journal.flush(operation: .close)
        } catch {
            failure = error
        }
        let isJournalHealthy = journal.failure == nil
        journal.close()
        storage.shutDown()
        // No stray file is left once the editors are aborted and the trash is unlinked, unless
        // a delete failed: then the next open sweeps. The marker is written while the
        // directory is still locked, so no other cache can open before it exists.
        for trash in takePendingDeletions() { deleteFile(trash) }
        // Other threads' unlinks of trash end before the marker is decided: one that failed
        // leaves a file the next open must sweep.
        trashBeingUnlinked.wait()
        // Sharing: the others go on appending, and the marker would vouch for less than the
        // journal holds; the next open replays it.
        if failure == nil && isJournalHealthy && !hasUndeletedFiles && !trashUnlinkFailures.any && !isShared {
            // The image loads faster than any journal replays, a journal of blocks included
            // (docs/PERFORMANCE.md); where the image cannot hold the index, a journal of blocks
            // replays as fast as the first form loads: the marker alone then, unless reads moved
            // entries since the journal's order was written (packed storage journals no reads).
            let needsSnapshot =
                SavedIndex.canWriteImage(table, valueCount: valueCount)
                || !journal.replaysLikeASnapshot(entries: table.count) || unjournaledTouches > 0
            directory.leaveCleanMarker { emit in
                guard needsSnapshot else { return }
                SavedIndex.save(
                    table, appVersion: journal.appVersion, valueCount: valueCount,
                    storesLocations: journal.format.storesLocations, redundantOpCount: redundantOpCount, to: emit)
            }
        }
        releaseLock()
        return failure
    }

    /// Ends the session as a process exit would: buffered READ lines are written, open editors
    /// are left DIRTY (their files are deleted on the next open), the lock is released.
    mutating func closeAsProcessExit() {
        guard !isClosed else { return }
        if isReadOnly {
            let viewFileSystem = directory.fileSystem
            readOnlyView?.close(fileSystem: viewFileSystem)
            isClosed = true
            return
        }
        if isShared { try? enterExclusive() }
        try? journal.flush(operation: .endingSession)
        journal.close()
        storage.shutDown()
        releaseLock()
    }

    /// Ends the session as a killed process would: nothing buffered is written, no marker is
    /// left, the lock is released. For tests of recovery.
    mutating func closeAsCrash() {
        guard !isClosed else { return }
        journal.close()
        storage.shutDown()
        pendingDeletions.removeAll()
        releaseLock()
    }

    private mutating func releaseLock() {
        // Other threads' trash, taken under the lock before this, is unlinked without it; it
        // is this cache's to finish before another may open the directory. A few unlinks.
        trashBeingUnlinked.wait()
        lock?.release(using: fileSystem)
        lock = nil
        storage.compactingStorage?.releaseClaims()
        sharedView?.close(fileSystem: fileSystem)
        sharedView = nil
        holdsOperationLock = false
        sharedLock?.release(using: fileSystem)
        sharedLock = nil
        isClosed = true
    }
}
