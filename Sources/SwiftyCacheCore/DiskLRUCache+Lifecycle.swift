extension DiskLRUCache {
    /// Removes the entry for `key`. An editor open on it goes on as if creating the entry anew:
    /// its commit succeeds only if it wrote every slot (``CacheError/Code/incompleteEntry``
    /// otherwise), as if the removal had come before the edit.
    ///
    /// - Returns: Whether a committed entry existed.
    /// - Throws: ``CacheError/Code/invalidKey``, ``CacheError/Code/cacheClosed``,
    ///   ``CacheError/Code/journalUnavailable`` (nothing was removed).
    /// - Complexity: O(1), plus one `unlink` per slot.
    @discardableResult
    public func removeValue(forKey key: String) throws -> Bool {
        try validateForReading(key, operation: .remove)
        return try outsideGroups {
            try locked(operation: .remove, key: key, claimsCleanup: true) { try $0.remove(key: key) }
        }
    }

    /// Removes every committed entry that is not being edited.
    ///
    /// - Throws: ``CacheError/Code/cacheClosed``, ``CacheError/Code/journalUnavailable``.
    public func evictAll() throws {
        try outsideGroups { try locked(operation: .evictAll) { try $0.removeAll() } }
    }

    // MARK: Lifecycle

    /// Evicts down to ``maxSize`` and writes buffered journal lines to the OS.
    ///
    /// - Throws: ``CacheError/Code/cacheClosed``, or the journal's I/O error.
    public func flush() throws {
        try locked(operation: .flush) { try $0.flush() }
    }

    /// Aborts open editors, evicts down to ``maxSize``, flushes and closes the journal, and
    /// releases the directory lock. Open snapshots still read. Closing twice does nothing.
    ///
    /// Waits for a journal rebuild the background is writing, and for files other threads are
    /// deleting: once it returns, the cache touches its directory no more, and another cache
    /// (or the Java library) may open it.
    ///
    /// - Throws: The first I/O error met; the cache is closed regardless.
    public func close() throws {
        journalWatcher.withLock { $0?.stop() }
        let failure = outsideGroups { rebuildGate.withLock { _ in withState { $0.close() } } }
        changeHub.finish()
        if let failure { throw failure.reported(by: .close) }
    }

    /// Closes the cache and deletes its files: the journal, the lock, the clean marker and the
    /// value files of the keys it knows; then the directory, if nothing else is left in it.
    /// Files the cache did not create are never deleted.
    ///
    /// - Throws: ``CacheError/Code/readOnly``, and the errors of `close()`.
    public func delete() throws {
        guard !options.isReadOnly else { throw CacheError.readOnly(operation: .delete) }
        let failure: CacheError?
        do {
            try close()
            failure = nil
        } catch {
            failure = (error as? CacheError)?.reported(by: .delete)
        }
        _ = withState { $0.deleteOwnFiles() }
        if let failure { throw failure }
    }

    /// Reads the journal again, for a cache opened with ``Options/isReadOnly``: entries the
    /// writer committed since become readable, and removed ones disappear. A read-only cache
    /// otherwise reads from the journal as it was when opened (it follows a writer's journal
    /// compaction by itself). Does nothing on a cache that writes.
    ///
    /// - Throws: ``CacheError/Code/cacheClosed``, ``CacheError/Code/notACacheDirectory``,
    ///   ``CacheError/Code/ioFailure``.
    public func refresh() throws {
        try locked(operation: .refresh, access: .reads) { try $0.refreshReadOnly() }
    }

    /// Ends the session as a killed process would (nothing buffered is written, no clean
    /// marker is left, the lock is released), so that tests can reopen the directory as it
    /// stands after a crash.
    package func simulateCrash() {
        withState { $0.closeAsCrash() }
    }
}
