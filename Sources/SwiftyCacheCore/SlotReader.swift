#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif

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
