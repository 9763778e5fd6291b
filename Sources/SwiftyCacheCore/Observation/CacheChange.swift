#if canImport(FoundationEssentials)
package import FoundationEssentials
#else
package import Foundation
#endif

/// A change to a cache's entries, as ``DiskLRUCache/changes(bufferingKeys:)`` delivers it.
public struct CacheChange: Sendable, Hashable, CustomStringConvertible {
    /// What happened to the entry.
    public enum Kind: Sendable, Hashable {
        /// New values were committed: a set, an editor's commit.
        case committed
        /// The entry was removed: `removeValue(forKey:)`, or dropped as damaged.
        case removed
        /// The entry was evicted to keep the cache within its size.
        case evicted
        /// Every entry went at once (`evictAll()`); ``CacheChange/key`` is `nil`.
        case cleared
        /// More keys changed than the subscription holds while its consumer was away: some
        /// changes were dropped, and any key may have changed since the last change delivered.
        /// ``CacheChange/key`` is `nil`; read again what you show.
        case overflowed
    }

    /// The entry's key; `nil` for ``Kind/cleared`` and ``Kind/overflowed``.
    public var key: String?
    /// What happened.
    public var kind: Kind
    /// For a removal a read-only cache followed, the first value the entry had before (read
    /// from its last record, in packed storage), so that a layer above can tell which of its
    /// keys the entry held; `nil` otherwise. Not part of the change's identity.
    package var formerFirstValue: Data?
    /// Whether another cache made the change: one that shares the directory
    /// (``DiskLRUCache/Sharing/processes``), followed from its journal lines. Not part of the
    /// change's identity.
    package var isFromAnotherCache = false

    /// A change of `key`, or of every key when `key` is `nil`.
    public init(key: String?, kind: Kind) {
        self.key = key
        self.kind = kind
    }

    public static func == (left: CacheChange, right: CacheChange) -> Bool {
        left.key == right.key && left.kind == right.kind
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(key)
        hasher.combine(kind)
    }

    public var description: String { "\(kind) \(key ?? "(all)")" }
}
