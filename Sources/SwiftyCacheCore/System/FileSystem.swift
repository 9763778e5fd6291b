#if canImport(Darwin)
import Darwin
#elseif canImport(Glibc)
@preconcurrency import Glibc
#elseif canImport(Musl)
@preconcurrency import Musl
#else
#error("Unsupported platform")
#endif

/// The file-system calls the engine makes, and nothing else.
///
/// Every byte the cache reads or writes and every name it changes goes through one of these
/// functions, so a test can fail the Nth call with `ENOSPC` or `EIO` (see
/// `FaultInjectingFileSystem` in the test support target). Each call maps to one system call
/// and retries `EINTR`; none buffers.
package protocol FileSystem: Sendable {
    func open(_ path: String, flags: Int32, mode: UInt32) throws(SystemCallFailure) -> Int32
    func close(_ fd: Int32) throws(SystemCallFailure)
    /// Writes from `buffer`, returning how many bytes were written (may be short).
    func write(_ fd: Int32, _ buffer: UnsafeRawBufferPointer) throws(SystemCallFailure) -> Int
    /// Reads into `buffer` at `offset`, returning how many bytes were read (0 at end of file).
    func read(_ fd: Int32, into buffer: UnsafeMutableRawBufferPointer, at offset: Int64) throws(SystemCallFailure)
        -> Int
    /// Opens a file for reading as `open` does, but only when the path resolves from the
    /// kernel's caches (no directory or inode read from disk): `nil` when it would have to
    /// wait for the disk, or when the system cannot tell. Never sleeps on I/O.
    func openIfCached(cString path: UnsafePointer<CChar>, flags: Int32) throws(SystemCallFailure) -> Int32?
    /// Reads as ``read(_:into:at:)`` does, but only bytes already in memory (the page cache):
    /// `nil` when the read would have to wait for the disk, or when the system cannot tell.
    /// It never sleeps on I/O, so it may run where blocking must not (Swift's cooperative pool).
    func readIfCached(_ fd: Int32, into buffer: UnsafeMutableRawBufferPointer, at offset: Int64)
        throws(SystemCallFailure)
        -> Int?
    /// The file's size in bytes (`fstat`).
    func size(of fd: Int32) throws(SystemCallFailure) -> Int64
    /// The descriptor's file offset (`lseek(fd, 0, SEEK_CUR)`): for one opened with
    /// `O_APPEND`, where its last write ended, whatever others appended since.
    func offset(of fd: Int32) throws(SystemCallFailure) -> Int64
    func fsync(_ fd: Int32) throws(SystemCallFailure)
    func rename(_ source: String, to destination: String) throws(SystemCallFailure)
    /// A second name for a file; fails with `EEXIST` rather than replace one (`link(2)`).
    func link(_ source: String, to destination: String) throws(SystemCallFailure)
    /// Cuts an open file to `length` bytes (`ftruncate(2)`).
    func truncate(_ fd: Int32, to length: Int64) throws(SystemCallFailure)
    /// The bytes an unprivileged process may still write on the file system of `path`
    /// (`statvfs(3)`: available blocks times the fragment size).
    func availableSpace(atPath path: String) throws(SystemCallFailure) -> Int64
    func unlink(_ path: String) throws(SystemCallFailure)
    func mkdir(_ path: String, mode: UInt32) throws(SystemCallFailure)
    func rmdir(_ path: String) throws(SystemCallFailure)
    /// Takes an exclusive advisory lock without waiting (`flock(LOCK_EX | LOCK_NB)`).
    func lockExclusively(_ fd: Int32) throws(SystemCallFailure)
    /// Takes, converts or drops an advisory lock without waiting (`flock` with `LOCK_NB`):
    /// `EWOULDBLOCK` when another open file description holds a conflicting one.
    func advisoryLock(_ fd: Int32, _ kind: AdvisoryLock) throws(SystemCallFailure)
    /// The device and inode of an open file: its identity, whatever path reached it.
    func identity(of fd: Int32) throws(SystemCallFailure) -> FileIdentity
    /// The names in a directory, without `.` and `..`.
    func contentsOfDirectory(_ path: String) throws(SystemCallFailure) -> [String]
    /// The kind of the entry at `path`, not following a final symbolic link; `nil` if absent.
    func kind(of path: String) throws(SystemCallFailure) -> FileKind?
    /// The status of the entry at `path` (`lstat`: a final symbolic link is not followed);
    /// `nil` if absent.
    func status(atPath path: String) throws(SystemCallFailure) -> FileStatus?
    /// The status of an open file (`fstat`).
    func status(of fd: Int32) throws(SystemCallFailure) -> FileStatus

    // The hot paths (value files) pass NUL-terminated paths built on the stack, so that a
    // read or a write allocates no path string. The defaults forward to the `String` versions.
    func open(cString path: UnsafePointer<CChar>, flags: Int32, mode: UInt32) throws(SystemCallFailure) -> Int32
    func rename(cString source: UnsafePointer<CChar>, to destination: UnsafePointer<CChar>) throws(SystemCallFailure)
    func unlink(cString path: UnsafePointer<CChar>) throws(SystemCallFailure)

    /// Asks that reads through `fd` leave the file's access time alone, at best effort: reads
    /// of packed segments, a few hundred bytes each, then skip the kernel's access-time check.
    /// Nothing depends on it; the default does nothing.
    func skipAccessTimeUpdates(_ fd: Int32)

    /// The number of names the open file has: 0 once it was unlinked. The default asks
    /// ``status(of:)``.
    func linkCount(of fd: Int32) throws(SystemCallFailure) -> Int
}

extension FileSystem {
    /// The default cannot tell what is in memory: every open goes the blocking way.
    package func openIfCached(cString path: UnsafePointer<CChar>, flags: Int32) throws(SystemCallFailure) -> Int32? {
        nil
    }

    /// The default cannot tell what is in memory: every read goes the blocking way.
    package func readIfCached(_ fd: Int32, into buffer: UnsafeMutableRawBufferPointer, at offset: Int64)
        throws(SystemCallFailure) -> Int?
    {
        nil
    }

    package func open(cString path: UnsafePointer<CChar>, flags: Int32, mode: UInt32) throws(SystemCallFailure) -> Int32
    {
        try open(String(cString: path), flags: flags, mode: mode)
    }

    package func rename(cString source: UnsafePointer<CChar>, to destination: UnsafePointer<CChar>)
        throws(SystemCallFailure)
    {
        try rename(String(cString: source), to: String(cString: destination))
    }

    package func unlink(cString path: UnsafePointer<CChar>) throws(SystemCallFailure) {
        try unlink(String(cString: path))
    }

    package func skipAccessTimeUpdates(_ fd: Int32) {}

    package func linkCount(of fd: Int32) throws(SystemCallFailure) -> Int { try status(of: fd).linkCount }
}
