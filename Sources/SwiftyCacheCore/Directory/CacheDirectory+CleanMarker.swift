/// The clean marker, `journal.clean`: left by `close()`, removed by open.
///
/// Its first line records the journal's size, identity and modification time, so that a journal
/// another writer (the Java library) changed since makes the marker void; the ``SavedIndex``
/// follows it. Both are written and read through a buffer of bounded size, never held whole.
extension CacheDirectory {
    /// Leaves the marker that tells the next open no stray file exists, then the saved index
    /// `writeSnapshot` emits piece by piece (`emit` returns `false` once a write failed: the
    /// writer stops, and the damaged saved index is refused by the next open, which replays the
    /// journal). Best effort: without a marker, the next open sweeps the directory and replays
    /// the journal, which is only slower.
    func leaveCleanMarker(writingSnapshot writeSnapshot: (_ emit: (UnsafeRawBufferPointer) -> Bool) -> Void) {
        guard let status = try? fileSystem.status(atPath: journalPath), status.kind == .regular,
            let fd = try? fileSystem.open(cleanMarkerPath, flags: OpenFlags.createTruncate, mode: FileModes.file)
        else { return }
        defer { try? fileSystem.close(fd) }
        let text = Array(Self.markerText(for: status).utf8)
        guard (try? fileSystem.writeAll(fd, text)) != nil else { return }
        writeSnapshot { bytes in (try? fileSystem.writeAll(fd, bytes)) != nil }
    }

    /// Whether the clean marker vouches for the journal as it is now.
    func cleanMarkerMatches(_ journal: FileStatus) -> Bool {
        readCleanMarker(for: journal) { _ in true } ?? false
    }

    /// When the clean marker vouches for the journal as it is now, calls `readSnapshot` with the
    /// bytes that follow its line (possibly none) and returns what it returns; `nil` otherwise.
    func readCleanMarker<Result>(for journal: FileStatus, _ readSnapshot: (FileRegion) -> Result?) -> Result? {
        guard let fd = try? fileSystem.open(cleanMarkerPath, flags: OpenFlags.readOnly, mode: 0) else { return nil }
        defer { try? fileSystem.close(fd) }
        guard let status = try? fileSystem.status(of: fd), status.kind == .regular else { return nil }
        let marker = Array(Self.markerText(for: journal).utf8)
        var buffer = [UInt8](repeating: 0, count: marker.count)
        let count = buffer.withUnsafeMutableBytes { (try? fileSystem.readFully(fd, into: $0, at: 0)) ?? 0 }
        guard count == marker.count, buffer == marker, status.size >= Int64(marker.count) else { return nil }
        return readSnapshot(
            FileRegion(
                fileSystem: fileSystem, fd: fd, start: Int64(marker.count), count: Int(status.size) - marker.count))
    }

    private static func markerText(for journal: FileStatus) -> String {
        "\(journal.size) \(journal.identity.device) \(journal.identity.inode) "
            + "\(journal.modificationSeconds) \(journal.modificationNanoseconds)\n"
    }
}

/// A stretch of an open file, read in pieces: the saved index after the clean marker's line.
struct FileRegion {
    let fileSystem: any FileSystem
    let fd: Int32
    /// Where the stretch starts in the file.
    let start: Int64
    /// Its length in bytes.
    let count: Int

    /// Reads up to `buffer.count` bytes from `offset` in the region; fewer only at its end or
    /// on an error (0).
    func read(into buffer: UnsafeMutableRawBufferPointer, at offset: Int) -> Int {
        let wanted = Swift.max(0, Swift.min(buffer.count, count &- offset))
        guard wanted > 0 else { return 0 }
        let target = UnsafeMutableRawBufferPointer(rebasing: buffer[0..<wanted])
        return (try? fileSystem.readFully(fd, into: target, at: start &+ Int64(offset))) ?? 0
    }
}
