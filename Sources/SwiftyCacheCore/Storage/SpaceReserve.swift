/// A file of zeros a packed cache keeps beside its journal (`journal.reserve`), so that a disk
/// the cache filled alone is never a dead end: when the journal cannot grow for lack of space
/// (a removal's `REMOVE` line, a rebuild), the reserve is deleted and the write tried again;
/// the removals then free space for compaction, which deletes dead segments and compacts the
/// others, and the reserve is set aside again once there is room.
///
/// Its size follows the cache: an eighth of its live bytes, from 64 KiB up to one segment (and
/// never more than `maxSize`), so that a small cache does not pay a segment of disk for it.
/// From eight segments of live data on, it holds any segment's live records, which compaction
/// copies before deleting the segment; below, compaction on a full disk may have to wait for
/// removals that leave a segment emptier. File storage needs none (a removal deletes files,
/// and frees space by itself).
struct SpaceReserve {

    let directory: CacheDirectory
    /// The most bytes set aside.
    let ceiling: Int64

    private var fileSystem: any FileSystem { directory.fileSystem }
    var path: String { directory.path(CacheFileName.spaceReserve.name) }

    /// Sets the reserve aside if it is not there and the file system has room for it twice
    /// over (taking the last free bytes back would stop the writes it just let through): zeros
    /// written for real (a sparse file would reserve nothing), the file deleted again if they
    /// do not all fit. Best effort: without the room there is no reserve until later.
    ///
    /// - Complexity: O(size) of writes, when the reserve is missing or grows; one `lstat`
    ///   otherwise.
    func ensure(liveBytes: Int64) {
        let size = min(ceiling, max(64 << 10, liveBytes / 8))
        let existing: Int64
        do {
            let status = try fileSystem.status(atPath: path)
            guard status == nil || status?.kind == .regular else { return }
            existing = status?.size ?? 0
        } catch {
            return
        }
        // Grown to at least twice its size, so that a growing cache rewrites it rarely, or to
        // the ceiling (which a reserve just over half of it would otherwise never reach).
        guard size > 0, existing == 0 || size >= existing * 2 || (size == ceiling && existing < ceiling),
            let available = try? fileSystem.availableSpace(atPath: directory.path), available / 2 >= size
        else { return }
        if existing > 0 { try? fileSystem.unlink(path) }
        guard let fd = try? fileSystem.open(path, flags: OpenFlags.createSegment, mode: FileModes.file) else { return }
        let chunk = [UInt8](repeating: 0, count: 64 << 10)
        var written: Int64 = 0
        var complete = true
        while written < size {
            let count = Int(min(Int64(chunk.count), size - written))
            do {
                try fileSystem.writeAll(fd, count == chunk.count ? chunk : [UInt8](repeating: 0, count: count))
            } catch {
                complete = false
                break
            }
            written += Int64(count)
        }
        try? fileSystem.close(fd)
        if !complete { try? fileSystem.unlink(path) }
    }

    /// Deletes the reserve; whether there was one to free.
    func release() -> Bool {
        guard (try? fileSystem.kind(of: path)) == .regular else { return false }
        return (try? fileSystem.unlink(path)) != nil
    }

    /// Whether `error` says the disk is full.
    static func isNoSpace(_ error: any Error) -> Bool {
        if let error = error as? SystemCallFailure { return error.errno == Errno.noSpace }
        if let error = error as? CacheError.SystemCallError { return error.errno == Errno.noSpace }
        if let error = error as? CacheError, let cause = error.cause { return isNoSpace(cause) }
        return false
    }
}
