import Dispatch

/// How every operation of ``DiskLRUCache`` reaches its state: under the one lock, with the
/// slow parts (unlinking trash, waking the cleanup thread) after the lock is released.
extension DiskLRUCache {
    /// What a hold of the state may do to the directory, for a cache that shares it.
    enum StateAccess {
        /// Change it: the operation lock is taken.
        case writes
        /// Only read it: the others' lines are applied without the lock.
        case reads
        /// Follow the others: their lines are applied without the lock, the journal looked at
        /// whatever the count of changes says (the watcher, woken by a line).
        case follows
        /// Change it, once `body` wrote what needs no lock: `body` takes the operation lock
        /// (``CacheState/enterExclusive()``) itself (a set's record, appended first).
        case appendsFirst
    }

    /// Checks a key a write names: `[a-z0-9_-]{1,120}`.
    func validate(_ key: String, operation: CacheError.Operation) throws(CacheError) {
        guard Journal.isValidKey(key) else { throw CacheError.invalidKey(key, operation: operation) }
    }

    /// Checks a key a read or a removal names: a key a write accepts, or a wider one a journal
    /// written by the Java cache holds (``DiskLRUCache/keys()`` may list those).
    func validateForReading(_ key: String, operation: CacheError.Operation) throws(CacheError) {
        guard Journal.isReadableKey(key) else { throw CacheError.invalidKey(key, operation: operation) }
    }

    /// Runs `body` under the lock, after checking that the cache is open. With
    /// `writesReadLines`, the buffered `READ` lines are written after the lock is released,
    /// once enough have piled up (``CacheState/takeReadFlush()``): for reads that may write.
    /// An error `body` throws names `operation`, the public call (``CacheError/reported(by:)``).
    ///
    /// Where other processes write the directory too (``Sharing/processes``), a hold that may
    /// write (`access: .writes`, the default) first takes the directory's operation lock and
    /// applies what the others journaled; one that only reads applies it without the lock.
    func locked<T>(
        operation: CacheError.Operation, key: String? = nil, access: StateAccess = .writes, claimsCleanup: Bool = false,
        writesReadLines: Bool = false, _ body: (inout CacheState) throws -> T
    ) throws -> T {
        do {
            return try withState(claimsCleanup: claimsCleanup, writesReadLines: writesReadLines) {
                (state) throws -> T in
                guard !state.isClosed else { throw CacheError.closed(operation: operation, key: key) }
                if state.isShared {
                    if access == .writes {
                        try state.enterExclusive()
                    } else if access != .appendsFirst {
                        try state.catchUpWithOthers(cutsTornTail: false, looksAtJournal: access == .follows)
                    }
                }
                return try body(&state)
            }
        } catch let error as CacheError {
            throw error.reported(by: operation)
        }
    }

    /// Runs `body` under the lock; then, with the lock released, writes the `READ` lines taken
    /// (with `writesReadLines`), unlinks the files it moved to the trash, with `claimsCleanup`
    /// schedules the background cleanup if the state needs it, and resumes the consumers of
    /// ``changes(bufferingKeys:)`` that the changes recorded under the lock woke. In debug
    /// builds, checks the state's invariants before releasing the lock.
    ///
    /// A write (`claimsCleanup`) that finds compaction overdue in a directory within its budget
    /// compacts before it returns (``reclaimOverdueGarbage()``), unless `body` runs a group
    /// commit (whose leader must not wait on compaction, which waits for groups).
    ///
    /// With `catchesUp`, a cache that shares its directory applies what the others journaled
    /// first (best effort: for the properties that report the index). The operation lock a
    /// hold took (``CacheState/enterExclusive()``) is released before the state's lock.
    func withState<T, Failure: Error>(
        claimsCleanup: Bool = false, writesReadLines: Bool = false, leadsGroup: Bool = false, catchesUp: Bool = false,
        _ body: (inout CacheState) throws(Failure) -> T
    ) throws(Failure) -> T {
        var trash: [String] = []
        var unlinking: DispatchGroup?
        var unlinkFailures: TrashUnlinkFailures?
        var needsCleanup = false
        var isCompactionOverdue = false
        var readLines: JournalReadFlush?
        var pinsToWrite: (generation: UInt64, keys: [String])?
        defer {
            // First: the journal's output lock is held until these lines are written.
            readLines?.write()
            // A pinned entry removed: its pin goes from `journal.pins` too (best effort here;
            // a failure leaves the record for the next change, and an open drops a pin
            // whose entry is gone).
            if let pinsToWrite { try? writePins(pinsToWrite, retriesOnFailure: false) }
            // A trash file that cannot be unlinked is only a `.tmp` file: the next open without
            // a clean marker sweeps it, and a failed delete here only costs that marker.
            for path in trash where (try? cacheDirectory.fileSystem.removeFileIfPresent(path)) == nil {
                unlinkFailures?.note()
            }
            unlinking?.leave()
            if needsCleanup { scheduleCleanup() }
            if isCompactionOverdue { reclaimOverdueGarbage() }
            // Consumers of `changes()` resume only now, with the lock released.
            changeHub.deliverReady()
        }
        return try state.withLock { (state: inout CacheState) throws(Failure) -> T in
            var succeeded = false
            defer {
                // Sharing: pins changed in this hold are written before the operation lock goes.
                state.leaveExclusive()
                // After the lock: a set's deferred catch-up (CacheState+DeferredCatchUp) is in.
                if succeeded, claimsCleanup {
                    needsCleanup = state.claimCleanup()
                    isCompactionOverdue = state.isCompactionOverdue && !leadsGroup
                }
                if writesReadLines { readLines = state.takeReadFlush() }
                trash = state.takeTrashToUnlink()
                // (Sharing: only under the operation lock, by the next hold that takes it.)
                if state.pinsGeneration != state.pinsDurableGeneration, !state.isReadOnly, !state.isShared {
                    pinsToWrite = state.pinsToWrite
                    // Claimed: written once, by this call.
                    state.pinsDurableGeneration = state.pinsGeneration
                }
                if !trash.isEmpty {
                    unlinking = state.trashBeingUnlinked
                    unlinkFailures = state.trashUnlinkFailures
                }
                state.checkInvariants()
            }
            if catchesUp { try? state.catchUpWithOthers(cutsTornTail: false) }
            let result = try body(&state)
            succeeded = true
            return result
        }
    }
}
