package import SwiftyCacheCore

/// The changes of an ``ObjectCache``, from the moment
/// ``ObjectCache/changes(bufferingKeys:)`` was called: an `AsyncSequence` for one consumer,
/// which ends when the cache closes. Delivered as the engine's `CacheChanges` are: in order,
/// never while a lock is held, the latest change of each key kept for a consumer that falls
/// behind (bounded; one ``ObjectCacheChange/Kind/overflowed`` past the bound), ended at once by
/// cancelling the task that iterates.
public struct ObjectCacheChanges<Key: Hashable & Sendable>: AsyncSequence, Sendable {
    public typealias Element = ObjectCacheChange<Key>
    public typealias Failure = Never

    package let subscription: ChangeSubscription<ObjectCacheChange<Key>>

    public func makeAsyncIterator() -> Iterator { Iterator(subscription: subscription) }

    /// Waits for each change in turn.
    public struct Iterator: AsyncIteratorProtocol {
        public typealias Element = ObjectCacheChange<Key>
        public typealias Failure = Never

        let subscription: ChangeSubscription<ObjectCacheChange<Key>>

        /// The next change; `nil` when the cache has closed or the task was cancelled.
        public mutating func next() async -> ObjectCacheChange<Key>? { await subscription.next() }
    }
}
