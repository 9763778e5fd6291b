import SwiftyCacheCore

/// A change to an ``ObjectCache``'s values, as ``ObjectCache/changes(bufferingKeys:)``
/// delivers it.
public struct ObjectCacheChange<Key: Hashable & Sendable>: Sendable, Hashable {
    /// What happened to the value.
    public enum Kind: Sendable, Hashable {
        /// A value was set: on disk (`set`), or in memory, unsaved (`setUnsaved`), the moment
        /// it was made.
        case set
        /// The value was removed (`removeValue(forKey:)`).
        case removed
        /// A read found the value expired, and dropped it.
        case expired
        /// The engine evicted the value to stay within its size. ``ObjectCacheChange/key`` is
        /// `nil` when the cache has not seen the key since the first subscriber came: some value
        /// went, read again what you show.
        case evicted
        /// Every value went at once (`removeAll`); ``ObjectCacheChange/key`` is `nil`.
        case cleared
        /// More keys changed than the subscription holds while its consumer was away; any key
        /// may have changed since the last change delivered. ``ObjectCacheChange/key`` is `nil`.
        case overflowed
    }

    /// The value's key; `nil` for a change of every key, and for a change of a key the cache
    /// does not know by name (an eviction, or a writer's change seen by a read-only cache, of a
    /// key it has not read since someone subscribed): read again what you show.
    public var key: Key?
    /// What happened.
    public var kind: Kind

    /// A change of `key`, or of every key when `key` is `nil`.
    public init(key: Key?, kind: Kind) {
        self.key = key
        self.kind = kind
    }
}

extension ObjectCacheChange: ObservedChange {
    package var changedKey: Key? { key }
    package static var overflow: ObjectCacheChange { ObjectCacheChange(key: nil, kind: .overflowed) }
}
