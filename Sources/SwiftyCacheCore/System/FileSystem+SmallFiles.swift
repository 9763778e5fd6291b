#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Small files written whole and read whole, for the layers above the engine that record a
/// fact in the cache's directory (the object cache's key naming).
extension FileSystem {
    /// The contents of the file at `path`; `nil` when there is none.
    ///
    /// - Throws: `SystemCallFailure` for a file that cannot be read or is larger than `limit`
    ///   bytes (`EFBIG`).
    package func contentsOfSmallFile(atPath path: String, limit: Int) throws(SystemCallFailure) -> [UInt8]? {
        let fd: Int32
        do throws(SystemCallFailure) {
            fd = try open(path, flags: OpenFlags.readOnly, mode: 0)
        } catch {
            if error.errno == ENOENT { return nil }
            throw error
        }
        defer { try? close(fd) }
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: limit + 1, alignment: 1)
        defer { buffer.deallocate() }
        let count = try readFully(fd, into: buffer, at: 0)
        guard count <= limit else { throw SystemCallFailure(call: "read", errno: EFBIG) }
        return Array(buffer.prefix(count))
    }

    /// Makes `bytes` the contents of the file at `path` in `directory`, durably and atomically:
    /// written and synced under a temporary name, renamed over `path`, the directory synced.
    /// A crash leaves the old file or the new one, and at most a stray temporary file.
    package func replaceSmallFile(atPath path: String, in directory: String, with bytes: [UInt8])
        throws(SystemCallFailure)
    {
        let temporary = path + ".tmp"
        let fd = try open(temporary, flags: OpenFlags.createTruncate, mode: FileModes.file)
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: bytes.count, alignment: 1)
        defer { buffer.deallocate() }
        buffer.copyBytes(from: bytes)
        do throws(SystemCallFailure) {
            var written = 0
            while written < buffer.count {
                let count = try write(fd, UnsafeRawBufferPointer(rebasing: buffer[written...]))
                guard count > 0 else { throw SystemCallFailure(call: "write", errno: EIO) }
                written += count
            }
            try fsync(fd)
            try close(fd)
        } catch {
            try? close(fd)
            try? unlink(temporary)
            throw error
        }
        try rename(temporary, to: path)
        let directoryFD = try open(directory, flags: OpenFlags.directory, mode: 0)
        defer { try? close(directoryFD) }
        try fsync(directoryFD)
    }
}
