/// The committed entries' snapshots, opened lazily; see ``DiskLRUCache/snapshots()``.
public struct SnapshotSequence: Sequence, Sendable {
    let cache: DiskLRUCache
    let keys: [String]

    /// An iterator over the snapshots, opening each as it is reached.
    public func makeIterator() -> Iterator {
        Iterator(cache: cache, keys: keys[...])
    }

    /// Opens the snapshots of ``SnapshotSequence`` one at a time.
    public struct Iterator: IteratorProtocol {
        let cache: DiskLRUCache
        var keys: ArraySlice<String>

        /// The next entry's snapshot; entries removed since the sequence was made, and any
        /// that fail to open, are skipped.
        public mutating func next() -> Snapshot? {
            while let key = keys.popFirst() {
                if let snapshot = try? cache.openSnapshot(key: key, recordingRead: false, operation: .snapshots) {
                    return snapshot
                }
            }
            return nil
        }
    }
}
