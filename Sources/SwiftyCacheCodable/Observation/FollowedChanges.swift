import SwiftyCacheCore
import Synchronization

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The writer's changes as a read-only cache reports them, in order, each with the key its
/// entry holds: a key the cache never read is learnt from the entry's envelope, which records
/// it. A removal carries its former envelope from the engine; a commit's envelope is read once
/// the engine's lock is released (I/O is never done under it), so every change waits here
/// until the ones before it are resolved.
final class FollowedChanges<Key: Hashable & Codable & Sendable>: Sendable {
    enum Item: Sendable {
        /// A change whose key is known (or cannot be: `cleared`, `overflowed`).
        case resolved(ObjectCacheChange<Key>)
        /// A commit of the entry named `name`, whose key is read from its envelope.
        case committed(name: String)
    }

    private let queue = LockedState<[Item]>([])
    /// Whether `queue` holds anything: written under its lock, read without it, so that the
    /// drain after every engine call of a read-only cache costs one atomic load when nothing
    /// was followed.
    private let hasItems = Atomic<Bool>(false)
    private let isDraining = Atomic<Bool>(false)

    /// Queues a change. Called under the engine's lock: an append, nothing more.
    func append(_ item: Item) {
        queue.withLock {
            $0.append(item)
            hasItems.store(true, ordering: .sequentiallyConsistent)
        }
    }

    /// Resolves and records every queued change into `typed`, in order, and delivers them.
    /// Called with no lock held. One caller drains at a time; a change queued while it drains
    /// is drained by it (it looks again after letting go), never left behind.
    ///
    /// - Parameter firstValue: The first value of the entry named by its argument, read
    ///   without counting as a read; `nil` if it is gone.
    func drain(
        into typed: ChangeHub<ObjectCacheChange<Key>>, names: LockedState<[String: Key]>,
        firstValue: (String) -> Data?
    ) {
        while hasItems.load(ordering: .sequentiallyConsistent),
            !isDraining.exchange(true, ordering: .sequentiallyConsistent)
        {
            let items = queue.withLock { queue -> [Item] in
                defer {
                    queue.removeAll()
                    hasItems.store(false, ordering: .sequentiallyConsistent)
                }
                return queue
            }
            for item in items {
                switch item {
                case .resolved(let change):
                    typed.record(change)
                case .committed(let name):
                    let key = names.withLock { $0[name] } ?? firstValue(name).flatMap(Self.key(inEnvelope:))
                    if let key { names.withLock { $0[name] = key } }
                    typed.record(ObjectCacheChange(key: key, kind: .set))
                }
            }
            isDraining.store(false, ordering: .sequentiallyConsistent)
            typed.deliverReady()
            // A change queued while this call drained, whose own drain found it draining, is
            // taken by the loop's next turn: sequentially consistent, so that of the two
            // (this store then that load, the other's queueing then its exchange) at least one
            // sees the other's write.
        }
    }

    /// The key an entry's envelope (its first value) records; `nil` for bytes that are not an
    /// envelope or a key that does not decode as `Key`.
    static func key(inEnvelope bytes: Data) -> Key? {
        guard let keyBytes = Envelope.keyBytes(in: bytes) else { return nil }
        return try? KeyCoding.key(Key.self, from: keyBytes)
    }
}
