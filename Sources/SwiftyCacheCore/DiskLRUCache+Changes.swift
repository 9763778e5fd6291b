extension DiskLRUCache {
    /// The changes to the cache's entries from now on, as an `AsyncSequence` for one consumer:
    /// commits, removals, evictions, and `evictAll()` as one ``CacheChange/Kind/cleared``.
    ///
    /// ```swift
    /// Task {
    ///     for await change in cache.changes() where change.key == "profile" {
    ///         await reloadProfile()
    ///     }
    /// }
    /// ```
    ///
    /// Changes arrive in commit order, after they are journaled, never while the cache's lock
    /// is held and never from inside the call that made them. A consumer that falls behind
    /// misses intermediate versions of a key, never its final state (see ``CacheChanges``).
    /// The sequence ends when the cache closes; cancelling the task that iterates it, or
    /// dropping it, ends the subscription at once.
    ///
    /// A cache opened with ``Options/isReadOnly`` beside a writer in another process delivers the
    /// writer's changes too: it watches the journal (inotify on Linux, a dispatch source on
    /// Apple platforms, a check every 50 ms where neither works), and when the writer appends,
    /// it replays the journal and records each key the writer committed or removed since
    /// (evictions read as removals); a journal the writer rebuilt is one
    /// ``CacheChange/Kind/cleared`` change.
    ///
    /// A cache that shares its directory (``Options/sharing``) delivers the other caches'
    /// commits and removals the same way, as soon as it sees their journal lines.
    ///
    /// - Parameter keyLimit: The most keys whose changes wait for the consumer; past that, one
    ///   ``CacheChange/Kind/overflowed`` change replaces them. The default is 10,000.
    /// - Returns: The changes, buffered from this call on.
    /// - Complexity: With no subscriber, a change costs the cache one atomic load; with `s`
    ///   subscribers, O(`s`) amortized under the cache's lock.
    public func changes(bufferingKeys keyLimit: Int = 10_000) -> CacheChanges {
        let changes = CacheChanges(subscription: ChangeSubscription(hub: changeHub, keyLimit: keyLimit))
        if options.isReadOnly || options.sharing.isShared { followWriter() }
        return changes
    }

    /// Starts following the writer's journal, once: the watcher calls back when it may have
    /// changed, and what changed is recorded and delivered as this process's own changes are.
    package func followWriter() {
        journalWatcher.withLock { watcher in
            guard watcher == nil else { return }
            watcher = JournalWatcher(directory: cacheDirectory.path) { [weak self] in
                guard let self else { return }
                // A failure (the cache closed, an I/O error) is left for the next change or read.
                _ = try? self.locked(operation: .refresh, access: .follows) { try $0.followWriter() }
            }
        }
    }
}
