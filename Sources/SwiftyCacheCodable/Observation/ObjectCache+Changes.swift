import SwiftyCacheCore

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

extension ObjectCache {
    /// The changes to the cache's values from now on, as an `AsyncSequence` for one consumer:
    /// sets (on disk, or in memory with `setUnsaved`, the moment they are made), removals,
    /// expiries found, evictions, and `removeAll()` as one ``ObjectCacheChange/Kind/cleared``.
    ///
    /// ```swift
    /// for await change in pages.changes() {
    ///     if let url = change.key { refresh(url) } else { refreshAll() }
    /// }
    /// ```
    ///
    /// Changes arrive in order, never while a lock of the cache is held and never from inside
    /// the call that made them; a consumer that falls behind misses intermediate versions of a
    /// key, never its final state (see ``ObjectCacheChanges``).
    ///
    /// - Parameter keyLimit: The most keys whose changes wait for the consumer; past that, one
    ///   ``ObjectCacheChange/Kind/overflowed`` change replaces them. The default is 10,000.
    /// - Returns: The changes, buffered from this call on.
    /// A cache opened read-only beside a writer in another process delivers the writer's sets
    /// and removals too (see `DiskLRUCache.changes(bufferingKeys:)`), each with its key, read
    /// from the entry's envelope when this process has not seen it; only a removal in file
    /// storage of a key this process never saw (its files are gone) comes with no key.
    ///
    /// - Complexity: While someone observes, the cache keeps the engine name of each key it
    ///   writes or reads (to report evictions by key): O(keys touched) memory.
    public func changes(bufferingKeys keyLimit: Int = 10_000) -> ObjectCacheChanges<Key> {
        let changes = ObjectCacheChanges(subscription: ChangeSubscription(hub: changeHub, keyLimit: keyLimit))
        if isReadOnly || sharesDirectory { disk.followWriter() }
        return changes
    }

    /// The value of `key` as it changes: its current value first, then its value after each
    /// change, `nil` once it is removed, expires or is evicted. A value set through the
    /// `setUnsaved` (in memory, unsaved) counts the moment it is set.
    ///
    /// ```swift
    /// for await note in notes.values(forKey: id) {
    ///     editor.show(note)
    /// }
    /// ```
    ///
    /// A consumer that falls behind sees the latest value, not every one in between. The
    /// sequence ends when the cache closes or the task iterating it is cancelled.
    ///
    /// - Parameter key: The key to follow.
    /// - Returns: The values, the first one read when iteration starts; changes are followed
    ///   from this call on.
    public func values(forKey key: Key) -> ObjectCacheValues<Key, Value> {
        let subscription = ChangeSubscription(hub: changeHub, keyLimit: 1, filter: key)
        if let keyBytes = try? KeyCoding.bytes(of: key) { rememberName(keyHasher.engineKey(for: keyBytes), of: key) }
        if isReadOnly { disk.followWriter() }
        return ObjectCacheValues(cache: self, key: key, subscription: subscription)
    }

    /// Records a change and delivers it. Called with no lock of the cache held.
    @inlinable
    func publish(_ kind: ObjectCacheChange<Key>.Kind, key: Key?) {
        guard isObserved else { return }
        publishObserved(kind, key: key)
    }

    /// Whether anyone subscribes to the changes.
    @usableFromInline
    var isObserved: Bool { changeHub.isObserved }

    /// ``publish(_:key:)`` once someone observes.
    @usableFromInline
    func publishObserved(_ kind: ObjectCacheChange<Key>.Kind, key: Key?) {
        changeHub.record(ObjectCacheChange(key: key, kind: kind))
        changeHub.deliverReady()
    }

    /// Remembers which key an engine name stands for, while someone observes, so that the
    /// engine's eviction of it is reported by key.
    @usableFromInline
    func rememberName(_ engineKey: String, of key: Key) {
        guard changeHub.isObserved || isReadOnly || sharesDirectory else { return }
        engineNames.withLock { $0[engineKey] = key }
    }

    /// What the object cache adds to the engine's changes: its evictions and clears, by key
    /// where the name is known. Runs under the engine's lock: dictionary work only.
    ///
    /// A read-only cache makes no change of its own: the writer's commits and removals (from
    /// another process) come through the engine, as sets and removals, each with its key
    /// (``FollowedChanges``): a name the cache has not seen is resolved from the entry's
    /// envelope, a commit's read once the engine's lock is released, a removal's from the
    /// former record the engine passes along (packed storage; in file storage the files are
    /// gone, and a removal of a key this process never saw has no key).
    ///
    /// A read-only cache drops from memory a value the writer changed (its memory tier's locks
    /// are never held around an engine call, so taking one here cannot deadlock), and so that
    /// it can, it remembers the name of every key it loads, observed or not.
    static func engineTap(
        typed: ChangeHub<ObjectCacheChange<Key>>, names: LockedState<[String: Key]>,
        memory: MemoryStripes<Key, Value>, isReadOnly: Bool, sharesDirectory: Bool = false,
        firstValue: @escaping @Sendable (String) -> Data?
    ) -> ChangeHub<CacheChange>.Tap {
        let followed = FollowedChanges<Key>()
        return ChangeHub<CacheChange>.Tap(
            record: { change in
                // The common case (a writer's own change, nobody observing) returns before
                // anything generic is touched: about a thousand instructions of metadata
                // lookups per change otherwise, under the engine's lock.
                guard typed.isObserved || isReadOnly || change.isFromAnotherCache else { return }
                recordChange(
                    change, typed: typed, names: names, memory: memory, isReadOnly: isReadOnly, followed: followed)
            },
            afterUnlock: {
                if isReadOnly || sharesDirectory {
                    followed.drain(into: typed, names: names, firstValue: firstValue)
                }
                typed.deliverReady()
            })
    }

    /// The tap's work for a change someone observes or this cache follows (see ``engineTap``).
    @inline(never)
    private static func recordChange(
        _ change: CacheChange, typed: ChangeHub<ObjectCacheChange<Key>>, names: LockedState<[String: Key]>,
        memory: MemoryStripes<Key, Value>, isReadOnly: Bool, followed: FollowedChanges<Key>
    ) {
        // Where other processes write too, their changes are followed as a read-only
        // cache follows its writer's; this process's own are reported by the cache.
        let isReadOnly = isReadOnly || change.isFromAnotherCache
        let name = change.key
        var key = name.flatMap { name in names.withLock { $0[name] } }
        if isReadOnly, key == nil, let name, let former = change.formerFirstValue {
            key = FollowedChanges<Key>.key(inEnvelope: former)
            if let key { names.withLock { $0[name] = key } }
        }
        if change.isFromAnotherCache {
            // Counted first, so that nothing read or written across it is kept.
            // A name never seen here is no value in memory (every key read or written here
            // is remembered): only counted.
            if change.kind == .cleared {
                memory.dropAllChangedByOthers()
            } else if let key {
                memory.dropChangedByOthers(key)
            } else {
                memory.noteChangedByOthers()
            }
        } else if isReadOnly, let key, change.kind != .cleared {
            memory.withLock(for: key) { _ = $0.remove(key) }
        } else if isReadOnly, change.kind == .cleared {
            memory.updateEach { $0.removeAll() }
        }
        guard typed.isObserved else { return }
        switch change.kind {
        case .evicted:
            if let name { names.withLock { _ = $0.removeValue(forKey: name) } }
            typed.record(ObjectCacheChange(key: key, kind: .evicted))
        case .cleared:
            if isReadOnly {
                followed.append(.resolved(ObjectCacheChange(key: nil, kind: .cleared)))
            } else {
                typed.record(ObjectCacheChange(key: nil, kind: .cleared))
            }
        case .committed where isReadOnly:
            if let key {
                followed.append(.resolved(ObjectCacheChange(key: key, kind: .set)))
            } else if let name {
                followed.append(.committed(name: name))
            }
        case .removed where isReadOnly:
            followed.append(.resolved(ObjectCacheChange(key: key, kind: .removed)))
        case .committed, .removed, .overflowed:
            // A writer's object cache reports its own writes and removals, by key.
            break
        }
    }
}
