#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif

extension DiskLRUCache {
    /// Returns a snapshot of the entry for `key`, or `nil` if there is none.
    ///
    /// The snapshot keeps the entry's files open: it reads the values as they were now, whatever
    /// later edits, removals and evictions do. Close it (or drop it) to release them. A read
    /// makes the entry the most recently used one.
    ///
    /// An entry whose files were deleted or damaged underneath the cache is dropped and reads
    /// as a miss.
    ///
    /// - Throws: ``CacheError/Code/invalidKey``, ``CacheError/Code/cacheClosed``, or
    ///   ``CacheError/Code/ioFailure`` if a value file cannot be opened for another reason
    ///   than its absence (too many open files, for example).
    /// - Complexity: O(1), plus one `open` and `fstat` per slot.
    public func snapshot(forKey key: String) throws -> Snapshot? {
        try validateForReading(key, operation: .snapshot)
        return try openSnapshot(key: key, recordingRead: true, operation: .snapshot)
    }

    /// Reads every slot of the entry for `key`; `nil` if there is none.
    ///
    /// - Throws: The errors of `snapshot(forKey:)` and ``Snapshot/readData(at:)``.
    public func data(forKey key: String) throws -> [Data]? {
        try validateForReading(key, operation: .data)
        // The values are opened under the lock (all old or all new slots) and read outside it,
        // without the Snapshot object a caller would keep.
        guard let opened = try openEntry(key: key, recordingRead: true, operation: .data) else { return nil }
        defer { storage.close(opened.values) }
        return try CacheError.reporting(.data) {
            try storage.readAll(opened.values, lengths: opened.lengths, key: key)
        }
    }

    /// `data(forKey:)` for the layer above, without copying the slots out of a packed record:
    /// the layer parses and decodes them where they are. A read as `data(forKey:)` is in every
    /// other respect (it counts, touches, and writes its `READ` line).
    ///
    /// - Complexity: As `data(forKey:)`, less one copy per slot of a packed entry.
    @usableFromInline
    package func readValues(forKey key: String) throws -> ReadValues? {
        try validateForReading(key, operation: .data)
        guard let opened = try openEntry(key: key, recordingRead: true, operation: .data) else { return nil }
        defer { storage.close(opened.values) }
        if let record = opened.values.record, record.holdsEverySlot {
            return ReadValues(record: record, count: opened.lengths.count)
        }
        return ReadValues(
            try CacheError.reporting(.data) { try storage.readAll(opened.values, lengths: opened.lengths, key: key) })
    }

    /// Whether a committed entry exists for `key`. It does not count as a read.
    public func containsValue(forKey key: String) throws -> Bool {
        try validateForReading(key, operation: .contains)
        return try locked(operation: .contains, key: key, access: .reads) { state in
            state.table.index(of: key).map { state.table[$0].isReadable } ?? false
        }
    }

    /// The keys of committed entries, from least to most recently used.
    ///
    /// - Complexity: O(n).
    public func keys() throws -> [String] {
        try locked(operation: .keys, access: .reads) { $0.readableKeys() }
    }

    /// Snapshots of the committed entries, from least to most recently used, opened one at a
    /// time as the sequence is iterated. Entries removed meanwhile are skipped. Iterating does
    /// not change the LRU order.
    public func snapshots() throws -> SnapshotSequence {
        SnapshotSequence(cache: self, keys: try keys())
    }

    /// A snapshot of the entry for `key` that does not count as a read and leaves the LRU order
    /// as it is; `nil` on a miss. For layers above the engine that look at an entry's metadata.
    package func peekSnapshot(forKey key: String) throws -> Snapshot? {
        try validateForReading(key, operation: .snapshot)
        return try openSnapshot(key: key, recordingRead: false, operation: .snapshot)
    }

    /// Opens a snapshot; with `recordingRead`, the read counts and moves the entry in LRU order.
    func openSnapshot(key: String, recordingRead: Bool, operation: CacheError.Operation) throws -> Snapshot? {
        try openEntry(key: key, recordingRead: recordingRead, operation: operation).map {
            Snapshot(cache: self, key: key, opened: $0)
        }
    }
}
