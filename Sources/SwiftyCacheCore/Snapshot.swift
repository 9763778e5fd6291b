#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif

/// The values of one entry as they were when the snapshot was taken.
///
/// A snapshot holds its values open, so later edits, removals and evictions do not change
/// what it reads (on POSIX a replaced or deleted file stays readable through an open
/// descriptor). ``close()`` releases them; so does releasing the snapshot.
public final class Snapshot: Sendable {
    /// The entry's key.
    public let key: String
    /// The byte length of each slot.
    public var lengths: [Int] { Array(slotLengths) }
    let slotLengths: SlotLengths
    let sequenceNumber: UInt64
    private let cache: DiskLRUCache
    /// `nil` once closed. The lock also keeps `close()` from racing a read.
    private let values: LockedState<OpenedValues?>

    init(cache: DiskLRUCache, key: String, opened: DiskLRUCache.OpenedEntry) {
        self.cache = cache
        self.key = key
        self.sequenceNumber = opened.sequenceNumber
        self.slotLengths = opened.lengths
        self.values = LockedState(opened.values)
    }

    deinit {
        close()
    }

    /// The number of slots.
    public var valueCount: Int { slotLengths.count }

    /// The byte length of slot `index`; `nil` for an index outside `0..<valueCount`.
    public func length(at index: Int) -> Int? {
        slotLengths.indices.contains(index) ? slotLengths[index] : nil
    }

    /// Reads all of slot `index`, with the reason when it cannot.
    ///
    /// - Throws: ``CacheError/Code/slotOutOfRange``, ``CacheError/Code/snapshotClosed``,
    ///   ``CacheError/Code/ioFailure``, or ``CacheError/Code/corruptValue`` if the value is
    ///   shorter than the journal recorded.
    public func readData(at index: Int) throws -> Data {
        try checkSlot(index, operation: .read)
        let storage = cache.storage
        return try values.withLock { (values) throws(CacheError) -> Data in
            guard let values else { throw CacheError.snapshotClosed(key: key, operation: .read) }
            return try storage.readWhole(values, slot: index, length: slotLengths[index], key: key)
        }
    }

    /// Reads slot `index` as a string; `nil` if its bytes are not valid in `encoding`.
    ///
    /// - Throws: The errors of ``readData(at:)``.
    public func readString(at index: Int, encoding: String.Encoding = .utf8) throws -> String? {
        String(data: try readData(at: index), encoding: encoding)
    }

    /// A reader that streams slot `index` in pieces, for values too large to hold in memory.
    ///
    /// - Throws: ``CacheError/Code/slotOutOfRange``.
    public func reader(at index: Int) throws -> SlotReader {
        try checkSlot(index, operation: .read)
        return SlotReader(snapshot: self, slot: index)
    }

    /// An editor for this entry, or `nil` if the entry changed since the snapshot was taken
    /// (committed, removed or evicted) or another editor holds it.
    ///
    /// - Throws: The errors of ``DiskLRUCache/edit(forKey:)-6ed5f``.
    public func edit() throws -> Editor? {
        try cache.beginEdit(key: key, expectedSequenceNumber: sequenceNumber)
    }

    /// Releases the values. Reads after this throw ``CacheError/Code/snapshotClosed``.
    public func close() {
        let storage = cache.storage
        values.withLock { values in
            if let values { storage.close(values) }
            values = nil
        }
    }

    /// Reads up to `buffer.count` bytes of a slot at `offset`; fewer only at the end of the slot.
    func read(slot: Int, into buffer: UnsafeMutableRawBufferPointer, at offset: Int) throws -> Int {
        let storage = cache.storage
        return try values.withLock { (values) throws(CacheError) -> Int in
            guard let values else { throw CacheError.snapshotClosed(key: key, operation: .read) }
            return try readUntilFull(buffer) { (rest, filled) throws(CacheError) -> Int? in
                try storage.read(values, slot: slot, key: key, into: rest, at: offset + filled)
            } ?? 0
        }
    }

    private func checkSlot(_ index: Int, operation: CacheError.Operation) throws(CacheError) {
        guard slotLengths.indices.contains(index) else {
            throw CacheError.slotOutOfRange(index, valueCount: slotLengths.count, key: key, operation: operation)
        }
    }
}
