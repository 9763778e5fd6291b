#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif
import Synchronization

/// The values of one entry as they were when the snapshot was taken.
///
/// A snapshot holds its value files open, so later edits, removals and evictions do not
/// change what it reads (on POSIX a replaced or deleted file stays readable through an open
/// descriptor). ``close()`` releases the files; so does releasing the snapshot.
public final class Snapshot: Sendable {
    /// The entry's key.
    public let key: String
    /// The byte length of each slot.
    public let lengths: [Int]
    let sequenceNumber: UInt64
    private let cache: DiskLRUCache
    /// `nil` once closed. The lock also keeps `close()` from racing a read.
    private let descriptors: LockedState<[Int32]?>

    init(cache: DiskLRUCache, key: String, sequenceNumber: UInt64, lengths: [Int], descriptors: [Int32]) {
        self.cache = cache
        self.key = key
        self.sequenceNumber = sequenceNumber
        self.lengths = lengths
        self.descriptors = LockedState(descriptors)
    }

    deinit {
        close()
    }

    /// The number of slots.
    public var valueCount: Int { lengths.count }

    /// The byte length of slot `index`; `nil` for an index outside `0..<valueCount`.
    public func length(at index: Int) -> Int? {
        lengths.indices.contains(index) ? lengths[index] : nil
    }

    /// All of slot `index`; `nil` if it cannot be read (see ``readData(at:)`` for the reason).
    public func data(at index: Int) -> Data? {
        try? readData(at: index)
    }

    /// Reads all of slot `index`, with the reason when it cannot.
    ///
    /// - Throws: ``CacheError/Code/slotOutOfRange``, ``CacheError/Code/snapshotClosed``,
    ///   ``CacheError/Code/ioFailure``, or ``CacheError/Code/corruptValue`` if the file is
    ///   shorter than the journal recorded.
    public func readData(at index: Int) throws -> Data {
        try checkSlot(index, operation: "read")
        let environment = cache.environment
        return try descriptors.withLock { descriptors in
            guard let descriptors else {
                throw CacheError(code: .snapshotClosed, message: "the snapshot was closed", key: key, operation: "read")
            }
            return try Self.readWhole(
                descriptors[index], length: lengths[index], key: key, slot: index, environment: environment)
        }
    }

    /// Reads all `length` bytes of an open slot file into memory that the `Data` then owns
    /// (no zero-filling first).
    static func readWhole(_ fd: Int32, length: Int, key: String, slot: Int, environment: CacheEnvironment) throws -> Data {
        guard length > 0 else { return Data() }
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: length, alignment: 16)
        var total = 0
        do {
            while total < length {
                let count = try environment.fileSystem.read(
                    fd, into: UnsafeMutableRawBufferPointer(rebasing: buffer[total...]), at: Int64(total))
                if count == 0 { break }
                total += count
            }
        } catch {
            buffer.deallocate()
            throw CacheError.io(error, operation: "read", path: environment.cleanPath(key, slot), key: key)
        }
        guard total == length, let base = buffer.baseAddress else {
            buffer.deallocate()
            throw CacheError(
                code: .corruptValue, message: "the value file holds \(total) bytes, the journal recorded \(length)",
                key: key, path: environment.cleanPath(key, slot), operation: "read")
        }
        return Data(bytesNoCopy: base, count: length, deallocator: .custom { pointer, _ in pointer.deallocate() })
    }

    /// Slot `index` as a string; `nil` if it cannot be read or is not valid in `encoding`.
    public func string(at index: Int, encoding: String.Encoding = .utf8) -> String? {
        data(at: index).flatMap { String(data: $0, encoding: encoding) }
    }

    /// A reader that streams slot `index` in pieces, for values too large to hold in memory.
    ///
    /// - Throws: ``CacheError/Code/slotOutOfRange``.
    public func reader(at index: Int) throws -> SlotReader {
        try checkSlot(index, operation: "read")
        return SlotReader(snapshot: self, slot: index)
    }

    /// An editor for this entry, or `nil` if the entry changed since the snapshot was taken
    /// (committed, removed or evicted) or another editor holds it.
    ///
    /// - Throws: The errors of ``DiskLRUCache/edit(_:)``.
    public func edit() throws -> Editor? {
        try cache.beginEdit(key: key, expectedSequenceNumber: sequenceNumber, requiresEntry: false)
    }

    /// Closes the value files. Reads after this throw ``CacheError/Code/snapshotClosed``.
    public func close() {
        let fileSystem = cache.environment.fileSystem
        descriptors.withLock { descriptors in
            for fd in descriptors ?? [] { try? fileSystem.close(fd) }
            descriptors = nil
        }
    }

    /// Reads up to `buffer.count` bytes of a slot at `offset`; fewer only at the end of the file.
    func read(slot: Int, into buffer: UnsafeMutableRawBufferPointer, at offset: Int) throws -> Int {
        let environment = cache.environment
        return try descriptors.withLock { descriptors in
            guard let descriptors else {
                throw CacheError(
                    code: .snapshotClosed, message: "the snapshot was closed", key: key, operation: "read")
            }
            var total = 0
            while total < buffer.count {
                let count: Int
                do {
                    count = try environment.fileSystem.read(
                        descriptors[slot], into: UnsafeMutableRawBufferPointer(rebasing: buffer[total...]),
                        at: Int64(offset + total))
                } catch {
                    throw CacheError.io(error, operation: "read", path: environment.cleanPath(key, slot), key: key)
                }
                if count == 0 { break }
                total += count
            }
            return total
        }
    }

    private func checkSlot(_ index: Int, operation: String) throws {
        guard lengths.indices.contains(index) else {
            throw CacheError.slotOutOfRange(index, valueCount: lengths.count, key: key, operation: operation)
        }
    }
}

/// Streams one slot of a ``Snapshot`` in pieces.
public final class SlotReader {
    private let snapshot: Snapshot
    private let slot: Int
    /// The number of bytes read so far.
    public private(set) var offset = 0

    init(snapshot: Snapshot, slot: Int) {
        self.snapshot = snapshot
        self.slot = slot
    }

    /// The slot's total length.
    public var length: Int { snapshot.lengths[slot] }

    /// Reads the next piece, at most `count` bytes; empty at the end.
    ///
    /// - Throws: ``CacheError/Code/snapshotClosed`` or ``CacheError/Code/ioFailure``.
    public func read(upToCount count: Int) throws -> Data {
        let wanted = max(0, min(count, length - offset))
        guard wanted > 0 else { return Data() }
        var data = Data(count: wanted)
        let read = try data.withUnsafeMutableBytes { buffer in
            try snapshot.read(slot: slot, into: buffer, at: offset)
        }
        offset += read
        if read < wanted { data.removeSubrange(read...) }
        return data
    }
}

/// The committed entries' snapshots, opened lazily; see ``DiskLRUCache/snapshots()``.
public struct SnapshotSequence: Sequence, Sendable {
    let cache: DiskLRUCache
    let keys: [String]

    public func makeIterator() -> Iterator {
        Iterator(cache: cache, keys: keys[...])
    }

    public struct Iterator: IteratorProtocol {
        let cache: DiskLRUCache
        var keys: ArraySlice<String>

        /// The next entry's snapshot; entries removed since the sequence was made, and any
        /// that fail to open, are skipped.
        public mutating func next() -> Snapshot? {
            while let key = keys.popFirst() {
                let cache = self.cache
                if let snapshot = try? cache.locked(operation: "snapshots", key: key, { state in
                    try cache.openSnapshot(key: key, recordingRead: false, in: &state)
                }) {
                    return snapshot
                }
            }
            return nil
        }
    }
}
