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
    /// - Parameter keyLimit: The most keys whose changes wait for the consumer; past that, one
    ///   ``CacheChange/Kind/overflowed`` change replaces them. The default is 10,000.
    /// - Returns: The changes, buffered from this call on.
    /// - Complexity: With no subscriber, a change costs the cache one atomic load; with `s`
    ///   subscribers, O(`s`) amortized under the cache's lock.
    public func changes(bufferingKeys keyLimit: Int = 10_000) -> CacheChanges {
        CacheChanges(subscription: ChangeSubscription(hub: changeHub, keyLimit: keyLimit))
    }
}
