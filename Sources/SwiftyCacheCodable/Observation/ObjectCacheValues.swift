import SwiftyCacheCore

/// The value of one key of an ``ObjectCache`` as it changes: its current value first, then the
/// value after each change (`nil` once it is removed, expires or is evicted), for one consumer.
/// See ``ObjectCache/values(forKey:)``.
public struct ObjectCacheValues<Key: Hashable & Codable & Sendable, Value: Codable & Sendable>: AsyncSequence, Sendable
{
    public typealias Element = Value?
    public typealias Failure = Never

    let cache: ObjectCache<Key, Value>
    let key: Key
    let subscription: ChangeSubscription<ObjectCacheChange<Key>>

    public func makeAsyncIterator() -> Iterator { Iterator(values: self) }

    /// Yields the current value, then waits for each change of the key.
    public struct Iterator: AsyncIteratorProtocol {
        public typealias Element = Value?
        public typealias Failure = Never

        let values: ObjectCacheValues
        var hasYieldedCurrent = false

        /// The value now (on the first call) or after the next change; the outer `nil` ends
        /// the sequence (the cache closed, the task was cancelled).
        public mutating func next() async -> Value?? {
            if hasYieldedCurrent {
                guard let change = await values.subscription.next() else { return nil }
                switch change.kind {
                case .removed, .expired:
                    return .some(nil)
                case .evicted where change.key != nil:
                    return .some(nil)
                case .set, .evicted, .cleared, .overflowed:
                    // An eviction of a key not known by name, or of every key: read again.
                    break
                }
            }
            hasYieldedCurrent = true
            // A read that fails (a disk error, a value that no longer decodes) reads as absent.
            return .some((try? await values.cache.value(forKey: values.key)) ?? nil)
        }
    }
}
