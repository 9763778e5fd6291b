#if canImport(Darwin)
import Darwin
#elseif canImport(Glibc)
@preconcurrency import Glibc
#elseif canImport(Musl)
@preconcurrency import Musl
#else
#error("Unsupported platform")
#endif

/// A file's device and inode numbers.
package struct FileIdentity: Hashable, Sendable {
    package var device: UInt64
    package var inode: UInt64

    package init(device: UInt64, inode: UInt64) {
        self.device = device
        self.inode = inode
    }
}

/// What `lstat` or `fstat` says of a file: enough to tell a regular file, its size, and
/// whether it is still the same file with the same contents as when last looked at.
package struct FileStatus: Hashable, Sendable {
    package var kind: FileKind
    package var size: Int64
    package var identity: FileIdentity
    package var modificationSeconds: Int64
    package var modificationNanoseconds: Int64
    /// The number of names the file has; 0 once it was deleted while open.
    package var linkCount: Int

    package init(
        kind: FileKind, size: Int64, identity: FileIdentity, modificationSeconds: Int64, modificationNanoseconds: Int64,
        linkCount: Int = 1
    ) {
        self.kind = kind
        self.size = size
        self.identity = identity
        self.modificationSeconds = modificationSeconds
        self.modificationNanoseconds = modificationNanoseconds
        self.linkCount = linkCount
    }
}

/// The kinds of directory entry the cache cares about.
package enum FileKind: Sendable {
    case regular, directory, symbolicLink, other
}

/// The file-system calls the engine makes, and nothing else.
///
/// Every byte the cache reads or writes and every name it changes goes through one of these
/// functions, so a test can fail the Nth call with `ENOSPC` or `EIO` (see
/// `FaultInjectingFileSystem` in the test support target). Each call maps to one system call
/// and retries `EINTR`; none buffers.
package protocol FileSystem: Sendable {
    func open(_ path: String, flags: Int32, mode: UInt32) throws(SystemCallError) -> Int32
    func close(_ fd: Int32) throws(SystemCallError)
    /// Writes from `buffer`, returning how many bytes were written (may be short).
    func write(_ fd: Int32, _ buffer: UnsafeRawBufferPointer) throws(SystemCallError) -> Int
    /// Reads into `buffer` at `offset`, returning how many bytes were read (0 at end of file).
    func read(_ fd: Int32, into buffer: UnsafeMutableRawBufferPointer, at offset: Int64) throws(SystemCallError) -> Int
    /// Opens a file for reading as `open` does, but only when the path resolves from the
    /// kernel's caches (no directory or inode read from disk): `nil` when it would have to
    /// wait for the disk, or when the system cannot tell. Never sleeps on I/O.
    func openIfCached(cString path: UnsafePointer<CChar>, flags: Int32) throws(SystemCallError) -> Int32?
    /// Reads as ``read(_:into:at:)`` does, but only bytes already in memory (the page cache):
    /// `nil` when the read would have to wait for the disk, or when the system cannot tell.
    /// It never sleeps on I/O, so it may run where blocking must not (Swift's cooperative pool).
    func readIfCached(_ fd: Int32, into buffer: UnsafeMutableRawBufferPointer, at offset: Int64) throws(SystemCallError)
        -> Int?
    /// The file's size in bytes (`fstat`).
    func size(of fd: Int32) throws(SystemCallError) -> Int64
    func fsync(_ fd: Int32) throws(SystemCallError)
    func rename(_ source: String, to destination: String) throws(SystemCallError)
    /// A second name for a file; fails with `EEXIST` rather than replace one (`link(2)`).
    func link(_ source: String, to destination: String) throws(SystemCallError)
    /// Cuts an open file to `length` bytes (`ftruncate(2)`).
    func truncate(_ fd: Int32, to length: Int64) throws(SystemCallError)
    /// The bytes an unprivileged process may still write on the file system of `path`
    /// (`statvfs(3)`: available blocks times the fragment size).
    func availableSpace(atPath path: String) throws(SystemCallError) -> Int64
    func unlink(_ path: String) throws(SystemCallError)
    func mkdir(_ path: String, mode: UInt32) throws(SystemCallError)
    func rmdir(_ path: String) throws(SystemCallError)
    /// Takes an exclusive advisory lock without waiting (`flock(LOCK_EX | LOCK_NB)`).
    func lockExclusively(_ fd: Int32) throws(SystemCallError)
    /// The device and inode of an open file: its identity, whatever path reached it.
    func identity(of fd: Int32) throws(SystemCallError) -> FileIdentity
    /// The names in a directory, without `.` and `..`.
    func contentsOfDirectory(_ path: String) throws(SystemCallError) -> [String]
    /// The kind of the entry at `path`, not following a final symbolic link; `nil` if absent.
    func kind(of path: String) throws(SystemCallError) -> FileKind?
    /// The status of the entry at `path` (`lstat`: a final symbolic link is not followed);
    /// `nil` if absent.
    func status(atPath path: String) throws(SystemCallError) -> FileStatus?
    /// The status of an open file (`fstat`).
    func status(of fd: Int32) throws(SystemCallError) -> FileStatus

    // The hot paths (value files) pass NUL-terminated paths built on the stack, so that a
    // read or a write allocates no path string. The defaults forward to the `String` versions.
    func open(cString path: UnsafePointer<CChar>, flags: Int32, mode: UInt32) throws(SystemCallError) -> Int32
    func rename(cString source: UnsafePointer<CChar>, to destination: UnsafePointer<CChar>) throws(SystemCallError)
    func unlink(cString path: UnsafePointer<CChar>) throws(SystemCallError)
}

extension FileSystem {
    /// The default cannot tell what is in memory: every open goes the blocking way.
    package func openIfCached(cString path: UnsafePointer<CChar>, flags: Int32) throws(SystemCallError) -> Int32? {
        nil
    }

    /// The default cannot tell what is in memory: every read goes the blocking way.
    package func readIfCached(_ fd: Int32, into buffer: UnsafeMutableRawBufferPointer, at offset: Int64)
        throws(SystemCallError) -> Int?
    {
        nil
    }

    package func open(cString path: UnsafePointer<CChar>, flags: Int32, mode: UInt32) throws(SystemCallError) -> Int32 {
        try open(String(cString: path), flags: flags, mode: mode)
    }

    package func rename(cString source: UnsafePointer<CChar>, to destination: UnsafePointer<CChar>)
        throws(SystemCallError)
    {
        try rename(String(cString: source), to: String(cString: destination))
    }

    package func unlink(cString path: UnsafePointer<CChar>) throws(SystemCallError) {
        try unlink(String(cString: path))
    }
}

/// Flags the engine opens files with. Writers never follow a planted symbolic link.
package enum OpenFlags {
    /// `O_NONBLOCK`: a FIFO or device planted under a cache file's name must never make an open
    /// or a read wait; on a regular file it changes nothing.
    package static let readOnly: Int32 = O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK
    package static let createTruncate: Int32 = O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK
    package static let append: Int32 = O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK
    /// A new packed segment: never over an existing file.
    package static let createSegment: Int32 = O_RDWR | O_CREAT | O_EXCL | O_APPEND | O_CLOEXEC | O_NOFOLLOW
    /// A packed segment a clean session left, to append to.
    package static let appendSegment: Int32 = O_RDWR | O_APPEND | O_CLOEXEC | O_NOFOLLOW
    package static let lockFile: Int32 = O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW
    package static let directory: Int32 = O_RDONLY | O_CLOEXEC | O_DIRECTORY
}

/// Permission bits for what the cache creates: private to the user.
package enum FileModes {
    package static let file: UInt32 = 0o600
    package static let directory: UInt32 = 0o700
}

package enum Errno {
    package static let noEntry = ENOENT
    package static let exists = EEXIST
    package static let notDirectory = ENOTDIR
    package static let wouldBlock = EWOULDBLOCK
    package static let noSpace = ENOSPC
    package static let io = EIO
    package static let accessDenied = EACCES
    package static let loop = ELOOP
    package static let nameTooLong = ENAMETOOLONG
    package static let notEmpty = ENOTEMPTY
    package static let readOnlyFileSystem = EROFS
    package static let noDeviceOrAddress = ENXIO
    package static let isDirectory = EISDIR
    /// What `link(2)` answers on a file system without hard links (FAT, exFAT, some FUSE ones).
    package static let noHardLinks = Set<Int32>([EPERM, EOPNOTSUPP, ENOTSUP, ENOSYS, EMLINK])
}

/// The real POSIX file system.
package struct SystemFileSystem: FileSystem {
    package init() {}

    @inline(__always)
    private func check(_ call: String, _ result: Int32) throws(SystemCallError) {
        if result != 0 { throw SystemCallError(call: call, errno: errno) }
    }

    package func open(_ path: String, flags: Int32, mode: UInt32) throws(SystemCallError) -> Int32 {
        let result: Result<Int32, SystemCallError> = path.withCString { path in
            do throws(SystemCallError) { return .success(try open(cString: path, flags: flags, mode: mode)) } catch {
                return .failure(error)
            }
        }
        return try result.get()
    }

    package func open(cString path: UnsafePointer<CChar>, flags: Int32, mode: UInt32) throws(SystemCallError) -> Int32 {
        while true {
            let fd = systemOpen(path, flags, mode_t(mode))
            if fd >= 0 { return fd }
            if errno != EINTR { throw SystemCallError(call: "open", errno: errno) }
        }
    }

    package func close(_ fd: Int32) throws(SystemCallError) {
        // Retrying close after EINTR is wrong on Linux: the descriptor is already gone.
        if systemClose(fd) != 0 && errno != EINTR { throw SystemCallError(call: "close", errno: errno) }
    }

    package func write(_ fd: Int32, _ buffer: UnsafeRawBufferPointer) throws(SystemCallError) -> Int {
        while true {
            let n = systemWrite(fd, buffer.baseAddress, buffer.count)
            if n >= 0 { return n }
            if errno != EINTR { throw SystemCallError(call: "write", errno: errno) }
        }
    }

    package func read(_ fd: Int32, into buffer: UnsafeMutableRawBufferPointer, at offset: Int64) throws(SystemCallError)
        -> Int
    {
        while true {
            let n = pread(fd, buffer.baseAddress, buffer.count, off_t(offset))
            if n >= 0 { return n }
            if errno != EINTR { throw SystemCallError(call: "pread", errno: errno) }
        }
    }

    /// `preadv2` with `RWF_NOWAIT` (Linux 4.14 and later): `EAGAIN` when the bytes are not in
    /// the page cache, and `nil` where the call or the flag is not available. The kernel may
    /// start readahead of the missing pages before it refuses, and return them if that read
    /// completed at once (a fast device): the call still never sleeps waiting for it.
    package func readIfCached(_ fd: Int32, into buffer: UnsafeMutableRawBufferPointer, at offset: Int64)
        throws(SystemCallError) -> Int?
    {
        #if os(Linux)
        guard let preadv2 = systemPReadV2 else { return nil }
        var vector = iovec(iov_base: buffer.baseAddress, iov_len: buffer.count)
        while true {
            let n = preadv2(fd, &vector, 1, off_t(offset), Self.readNoWait)
            if n >= 0 { return n }
            switch errno {
            case EINTR: continue
            // Not in memory; or a kernel or file system without the flag.
            case EAGAIN, EOPNOTSUPP, EINVAL, ENOSYS: return nil
            default: throw SystemCallError(call: "preadv2", errno: errno)
            }
        }
        #else
        return nil
        #endif
    }

    /// `openat2` with `RESOLVE_CACHED` (Linux 5.12 and later): `EAGAIN` when the lookup
    /// needs the disk, and `nil` where the call or the flag is not available.
    package func openIfCached(cString path: UnsafePointer<CChar>, flags: Int32) throws(SystemCallError) -> Int32? {
        #if os(Linux)
        guard let syscall = systemSyscall else { return nil }
        var how = OpenHow(flags: UInt64(UInt32(bitPattern: flags)), mode: 0, resolve: Self.resolveCached)
        while true {
            let fd = withUnsafePointer(to: &how) { how in
                syscall(
                    Self.openat2Number, Int(AT_FDCWD), Int(bitPattern: path), Int(bitPattern: how),
                    MemoryLayout<OpenHow>.size)
            }
            if fd >= 0 { return Int32(truncatingIfNeeded: fd) }
            switch errno {
            case EINTR: continue
            // Not in the caches; or a kernel without openat2 or the flag.
            case EAGAIN, ENOSYS, EINVAL, E2BIG, EPERM: return nil
            default: throw SystemCallError(call: "openat2", errno: errno)
            }
        }
        #else
        return nil
        #endif
    }

    #if os(Linux)
    /// `struct open_how` of `<linux/openat2.h>`.
    private struct OpenHow {
        var flags: UInt64
        var mode: UInt64
        var resolve: UInt64
    }
    /// `RESOLVE_CACHED` of `<linux/openat2.h>`.
    private static let resolveCached: UInt64 = 0x20
    /// `SYS_openat2`: the same number on every Linux architecture (new system calls share one table).
    private static let openat2Number = 437
    #endif

    /// `RWF_NOWAIT` of `<linux/fs.h>`, a cast macro Swift does not import.
    private static let readNoWait: Int32 = 0x08

    package func size(of fd: Int32) throws(SystemCallError) -> Int64 {
        var info = stat()
        try check("fstat", fstat(fd, &info))
        return Int64(info.st_size)
    }

    package func identity(of fd: Int32) throws(SystemCallError) -> FileIdentity {
        var info = stat()
        try check("fstat", fstat(fd, &info))
        return FileIdentity(device: UInt64(info.st_dev), inode: UInt64(info.st_ino))
    }

    package func fsync(_ fd: Int32) throws(SystemCallError) {
        while true {
            if systemFsync(fd) == 0 { return }
            if errno != EINTR { throw SystemCallError(call: "fsync", errno: errno) }
        }
    }

    package func rename(_ source: String, to destination: String) throws(SystemCallError) {
        let result = source.withCString { s in destination.withCString { d in systemRename(s, d) } }
        try check("rename", result)
    }

    package func rename(cString source: UnsafePointer<CChar>, to destination: UnsafePointer<CChar>)
        throws(SystemCallError)
    {
        try check("rename", systemRename(source, destination))
    }

    package func unlink(cString path: UnsafePointer<CChar>) throws(SystemCallError) {
        try check("unlink", systemUnlink(path))
    }

    package func availableSpace(atPath path: String) throws(SystemCallError) -> Int64 {
        var info = statvfs()
        try check("statvfs", path.withCString { statvfs($0, &info) })
        let (bytes, overflow) = Int64(clamping: UInt64(info.f_bavail)).multipliedReportingOverflow(
            by: Int64(clamping: UInt64(info.f_frsize)))
        return overflow ? Int64.max : bytes
    }

    package func truncate(_ fd: Int32, to length: Int64) throws(SystemCallError) {
        while true {
            if ftruncate(fd, off_t(length)) == 0 { return }
            if errno != EINTR { throw SystemCallError(call: "ftruncate", errno: errno) }
        }
    }

    package func link(_ source: String, to destination: String) throws(SystemCallError) {
        let result = source.withCString { s in destination.withCString { d in systemLink(s, d) } }
        try check("link", result)
    }

    package func unlink(_ path: String) throws(SystemCallError) {
        try check("unlink", path.withCString { systemUnlink($0) })
    }

    package func mkdir(_ path: String, mode: UInt32) throws(SystemCallError) {
        try check("mkdir", path.withCString { systemMkdir($0, mode_t(mode)) })
    }

    package func rmdir(_ path: String) throws(SystemCallError) {
        try check("rmdir", path.withCString { systemRmdir($0) })
    }

    package func lockExclusively(_ fd: Int32) throws(SystemCallError) {
        while true {
            if flock(fd, LOCK_EX | LOCK_NB) == 0 { return }
            if errno != EINTR { throw SystemCallError(call: "flock", errno: errno) }
        }
    }

    package func contentsOfDirectory(_ path: String) throws(SystemCallError) -> [String] {
        guard let dir = path.withCString({ opendir($0) }) else {
            throw SystemCallError(call: "opendir", errno: errno)
        }
        defer { closedir(dir) }
        var names: [String] = []
        while let entry = readdir(dir) {
            let name = withUnsafePointer(to: &entry.pointee.d_name) { pointer in
                pointer.withMemoryRebound(to: CChar.self, capacity: Int(NAME_MAX) + 1) { String(cString: $0) }
            }
            if name != "." && name != ".." { names.append(name) }
        }
        return names
    }

    package func status(atPath path: String) throws(SystemCallError) -> FileStatus? {
        var info = stat()
        if path.withCString({ lstat($0, &info) }) != 0 {
            if errno == ENOENT || errno == ENOTDIR { return nil }
            throw SystemCallError(call: "lstat", errno: errno)
        }
        return Self.status(info)
    }

    package func status(of fd: Int32) throws(SystemCallError) -> FileStatus {
        var info = stat()
        try check("fstat", fstat(fd, &info))
        return Self.status(info)
    }

    private static func status(_ info: stat) -> FileStatus {
        let kind: FileKind
        switch info.st_mode & S_IFMT {
        case S_IFREG: kind = .regular
        case S_IFDIR: kind = .directory
        case S_IFLNK: kind = .symbolicLink
        default: kind = .other
        }
        #if canImport(Darwin)
        let modified = info.st_mtimespec
        #else
        let modified = info.st_mtim
        #endif
        return FileStatus(
            kind: kind, size: Int64(info.st_size),
            identity: FileIdentity(device: UInt64(info.st_dev), inode: UInt64(info.st_ino)),
            modificationSeconds: Int64(modified.tv_sec), modificationNanoseconds: Int64(modified.tv_nsec),
            linkCount: Int(info.st_nlink))
    }

    package func kind(of path: String) throws(SystemCallError) -> FileKind? {
        var info = stat()
        if path.withCString({ lstat($0, &info) }) != 0 {
            if errno == ENOENT || errno == ENOTDIR { return nil }
            throw SystemCallError(call: "lstat", errno: errno)
        }
        switch info.st_mode & S_IFMT {
        case S_IFREG: return .regular
        case S_IFDIR: return .directory
        case S_IFLNK: return .symbolicLink
        default: return .other
        }
    }
}

// The libc functions under names that do not clash with `FileSystem`'s methods.
private let systemOpen: @Sendable (UnsafePointer<CChar>, Int32, mode_t) -> Int32 = { open($0, $1, $2) }
private let systemClose: @Sendable (Int32) -> Int32 = { close($0) }
private let systemWrite: @Sendable (Int32, UnsafeRawPointer?, Int) -> Int = { write($0, $1, $2) }
/// Forces a file or directory to stable storage. On Apple platforms `fsync(2)` only hands the
/// bytes to the drive, which may keep them in its volatile cache; `F_FULLFSYNC` asks the drive to
/// write its cache out too (what SQLite's `fullfsync` pragma does). A file system that refuses it
/// (some network and FAT volumes, some directories) gets `fsync`, as SQLite falls back.
private let systemFsync: @Sendable (Int32) -> Int32 = { fd in
    #if canImport(Darwin)
    if fcntl(fd, F_FULLFSYNC) == 0 { return 0 }
    #endif
    return fsync(fd)
}
private let systemRename: @Sendable (UnsafePointer<CChar>, UnsafePointer<CChar>) -> Int32 = { rename($0, $1) }
private let systemUnlink: @Sendable (UnsafePointer<CChar>) -> Int32 = { unlink($0) }
private let systemLink: @Sendable (UnsafePointer<CChar>, UnsafePointer<CChar>) -> Int32 = { link($0, $1) }
private let systemMkdir: @Sendable (UnsafePointer<CChar>, mode_t) -> Int32 = { mkdir($0, $1) }
private let systemRmdir: @Sendable (UnsafePointer<CChar>) -> Int32 = { rmdir($0) }

#if os(Linux)
/// `preadv2`, which Glibc declares only under `_GNU_SOURCE` (so Swift does not see it), looked up
/// once in the C library; `nil` on a C library without it.
private let systemPReadV2: (@convention(c) (Int32, UnsafePointer<iovec>?, Int32, off_t, Int32) -> Int)? = {
    // RTLD_DEFAULT is the null handle on Glibc and Musl.
    guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "preadv2") else { return nil }
    return unsafeBitCast(
        symbol, to: (@convention(c) (Int32, UnsafePointer<iovec>?, Int32, off_t, Int32) -> Int).self)
}()

/// `syscall(2)` with four arguments, for `openat2`, which Glibc 2.36 does not wrap. `syscall`
/// is variadic, which Swift cannot call; on Linux's x86-64 and AArch64 calling conventions,
/// integer arguments of a variadic call travel in the same registers as a fixed one, and the C
/// library's `syscall` only moves them into the kernel's, so a fixed four-argument type is safe.
private let systemSyscall: (@convention(c) (Int, Int, Int, Int, Int) -> Int)? = {
    #if arch(x86_64) || arch(arm64)
    guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "syscall") else { return nil }
    return unsafeBitCast(symbol, to: (@convention(c) (Int, Int, Int, Int, Int) -> Int).self)
    #else
    return nil
    #endif
}()
#endif
