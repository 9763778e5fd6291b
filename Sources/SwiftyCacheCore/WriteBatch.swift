#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif

extension DiskLRUCache {
    /// Sets and removals that `write(_:)` commits together.
    ///
    /// ```swift
    /// var batch = DiskLRUCache.WriteBatch()
    /// batch.setData([note], forKey: "note-42")
    /// batch.setData([folder], forKey: "folder-7")
    /// batch.removeValue(forKey: "draft-42")
    /// try cache.write(batch)
    /// ```
    ///
    /// Changes apply in the order they were added: a later change of a key wins.
    public struct WriteBatch: Sendable {
        /// One change of a batch.
        enum Change: Sendable {
            case set([Data])
            case remove
        }

        /// A change and the key it applies to.
        struct Member: Sendable {
            let key: String
            let change: Change
        }

        /// The changes, in order.
        private(set) var changes: [Member] = []

        /// An empty batch.
        public init() {}

        /// Sets every slot of the entry for `key`, as `setData(_:forKey:)` does.
        public mutating func setData(_ values: [Data], forKey key: String) {
            changes.append(Member(key: key, change: .set(values)))
        }

        /// Removes the entry for `key`, if there is one, as `removeValue(forKey:)`
        /// does.
        public mutating func removeValue(forKey key: String) {
            changes.append(Member(key: key, change: .remove))
        }

        /// The number of changes.
        public var count: Int { changes.count }

        /// Whether the batch holds no change.
        public var isEmpty: Bool { changes.isEmpty }
    }
}
