/// The changes of a ``DiskLRUCache``, from the moment ``DiskLRUCache/changes(bufferingKeys:)``
/// was called: an `AsyncSequence` for one consumer, which ends when the cache closes.
///
/// ```swift
/// for await change in cache.changes() {
///     print(change.kind, change.key ?? "every key")
/// }
/// ```
///
/// Changes come in commit order, after they are journaled, and never while the cache's lock is
/// held: a consumer may call the cache from its loop. While the consumer is away the changes
/// wait in a buffer of at most one change per key (the latest: intermediate versions may be
/// missed, a key's final state never is) and at most the number of keys asked for; past that
/// one ``CacheChange/Kind/overflowed`` change replaces them. A writer never waits for a
/// consumer. Cancelling the task that iterates, or dropping the sequence, ends the
/// subscription and frees its buffer at once.
public struct CacheChanges: AsyncSequence, Sendable {
    public typealias Element = CacheChange
    public typealias Failure = Never

    package let subscription: ChangeSubscription<CacheChange>

    public func makeAsyncIterator() -> Iterator { Iterator(subscription: subscription) }

    /// Waits for each change in turn.
    public struct Iterator: AsyncIteratorProtocol {
        public typealias Element = CacheChange
        public typealias Failure = Never

        let subscription: ChangeSubscription<CacheChange>

        /// The next change; `nil` when the cache has closed or the task was cancelled.
        public mutating func next() async -> CacheChange? { await subscription.hub.next(subscription.id) }
    }
}

/// One subscription to a ``ChangeHub``, ended when the last reference to it goes.
package final class ChangeSubscription<Change: ObservedChange>: Sendable {
    package let hub: ChangeHub<Change>
    package let id: UInt64

    package init(hub: ChangeHub<Change>, keyLimit: Int, filter: Change.Key? = nil) {
        self.hub = hub
        self.id = hub.subscribe(keyLimit: keyLimit, filter: filter)
    }

    /// The next change; `nil` when the subscription has ended.
    package func next() async -> Change? { await hub.next(id) }

    deinit { hub.unsubscribe(id) }
}
