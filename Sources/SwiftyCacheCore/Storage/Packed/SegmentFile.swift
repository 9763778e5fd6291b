import Synchronization

/// An open segment file; the descriptor is closed when the last reader lets go of it, so a
/// segment deleted by compaction stays readable for reads already under way.
final class SegmentFile: Sendable {
    let number: UInt32
    let fd: Int32
    private let fileSystem: any FileSystem

    init(number: UInt32, fd: Int32, fileSystem: any FileSystem) {
        self.number = number
        self.fd = fd
        self.fileSystem = fileSystem
        fileSystem.skipAccessTimeUpdates(fd)
    }

    deinit { try? fileSystem.close(fd) }

    /// The epoch of the last read that used it (``PackedStorage/Segments/lookUp(_:)``).
    private let lastUseStamp = Atomic<UInt64>(0)

    /// The epoch of the last read that used it.
    var lastUse: UInt64 { lastUseStamp.load(ordering: .relaxed) }

    /// Stamps the file with `epoch`, writing only when the stamp changes: readers of a segment
    /// that is already stamped share its cache line without writing it.
    func markUsed(epoch: UInt64) {
        if lastUseStamp.load(ordering: .relaxed) != epoch { lastUseStamp.store(epoch, ordering: .relaxed) }
    }

    /// The file's size as last seen: a lower bound, as segments only grow.
    private let knownSize = Atomic<Int64>(0)

    /// Whether the file holds `count` bytes from `offset`, so that reading them allocates no
    /// more than the file has: the size last seen answers most reads with no system call; one
    /// `fstat` refreshes it when it does not (the segment grew since, or the journal is lying).
    ///
    /// - Throws: The `fstat`'s error, when the size could not be learned.
    func holds(_ count: Int, at offset: Int64) throws(SystemCallFailure) -> Bool {
        let (end, overflow) = offset.addingReportingOverflow(Int64(count))
        guard !overflow else { return false }
        if end <= knownSize.load(ordering: .relaxed) { return true }
        let size = try fileSystem.size(of: fd)
        knownSize.max(size, ordering: .relaxed)
        return end <= size
    }

    /// Whether the file is a regular file (never a FIFO, a device or a directory).
    func isRegularFile() -> Bool { (try? fileSystem.status(of: fd))?.kind == .regular }

    /// Whether the file starts with the segment header (else it is not the cache's segment).
    func hasValidHeader() -> Bool {
        // A FIFO, a device or a directory under a segment's name is never the cache's.
        guard (try? fileSystem.status(of: fd))?.kind == .regular else { return false }
        var header = [UInt8](repeating: 0, count: PackedStorage.segmentHeader.count)
        let count = header.withUnsafeMutableBytes { (try? fileSystem.read(fd, into: $0, at: 0)) ?? 0 }
        return count == header.count && header == PackedStorage.segmentHeader
    }
}
