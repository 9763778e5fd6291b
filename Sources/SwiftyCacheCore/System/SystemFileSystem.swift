#if canImport(Darwin)
import Darwin
#elseif canImport(Glibc)
@preconcurrency import Glibc
#elseif canImport(Musl)
@preconcurrency import Musl
#else
#error("Unsupported platform")
#endif

/// The real POSIX file system.
package struct SystemFileSystem: FileSystem {
    package init() {}

    @inline(__always)
    private func check(_ call: String, _ result: Int32) throws(SystemCallFailure) {
        if result != 0 { throw SystemCallFailure(call: call, errno: errno) }
    }

    package func open(_ path: String, flags: Int32, mode: UInt32) throws(SystemCallFailure) -> Int32 {
        let result: Result<Int32, SystemCallFailure> = path.withCString { path in
            do throws(SystemCallFailure) { return .success(try open(cString: path, flags: flags, mode: mode)) } catch {
                return .failure(error)
            }
        }
        return try result.get()
    }

    package func open(cString path: UnsafePointer<CChar>, flags: Int32, mode: UInt32) throws(SystemCallFailure) -> Int32
    {
        while true {
            let fd = systemOpen(path, flags, mode_t(mode))
            if fd >= 0 { return fd }
            if errno != EINTR { throw SystemCallFailure(call: "open", errno: errno) }
        }
    }

    package func close(_ fd: Int32) throws(SystemCallFailure) {
        // Retrying close after EINTR is wrong on Linux: the descriptor is already gone.
        if systemClose(fd) != 0 && errno != EINTR { throw SystemCallFailure(call: "close", errno: errno) }
    }

    package func write(_ fd: Int32, _ buffer: UnsafeRawBufferPointer) throws(SystemCallFailure) -> Int {
        while true {
            let n = systemWrite(fd, buffer.baseAddress, buffer.count)
            if n >= 0 { return n }
            if errno != EINTR { throw SystemCallFailure(call: "write", errno: errno) }
        }
    }

    package func read(_ fd: Int32, into buffer: UnsafeMutableRawBufferPointer, at offset: Int64)
        throws(SystemCallFailure)
        -> Int
    {
        while true {
            let n = pread(fd, buffer.baseAddress, buffer.count, off_t(offset))
            if n >= 0 { return n }
            if errno != EINTR { throw SystemCallFailure(call: "pread", errno: errno) }
        }
    }

    /// `preadv2` with `RWF_NOWAIT` (Linux 4.14 and later): `EAGAIN` when the bytes are not in
    /// the page cache, and `nil` where the call or the flag is not available. The kernel may
    /// start readahead of the missing pages before it refuses, and return them if that read
    /// completed at once (a fast device): the call still never sleeps waiting for it.
    package func readIfCached(_ fd: Int32, into buffer: UnsafeMutableRawBufferPointer, at offset: Int64)
        throws(SystemCallFailure) -> Int?
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
            default: throw SystemCallFailure(call: "preadv2", errno: errno)
            }
        }
        #else
        return nil
        #endif
    }

    /// `openat2` with `RESOLVE_CACHED` (Linux 5.12 and later): `EAGAIN` when the lookup
    /// needs the disk, and `nil` where the call or the flag is not available.
    package func openIfCached(cString path: UnsafePointer<CChar>, flags: Int32) throws(SystemCallFailure) -> Int32? {
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
            default: throw SystemCallFailure(call: "openat2", errno: errno)
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

    /// Sets `O_NOATIME` (Linux): allowed to the file's owner, refused (`EPERM`) to anyone else,
    /// which leaves the descriptor as it was.
    package func skipAccessTimeUpdates(_ fd: Int32) {
        #if os(Linux)
        let flags = fcntl(fd, F_GETFL)
        if flags >= 0 { _ = fcntl(fd, F_SETFL, flags | Self.noAccessTime) }
        #endif
    }

    #if os(Linux)
    /// `O_NOATIME` of `<fcntl.h>`, which Glibc's module does not export: `01000000` on every
    /// architecture Swift supports on Linux.
    private static let noAccessTime: Int32 = 0o1000000
    #endif

    /// `RWF_NOWAIT` of `<linux/fs.h>`, a cast macro Swift does not import.
    private static let readNoWait: Int32 = 0x08

    package func size(of fd: Int32) throws(SystemCallFailure) -> Int64 {
        var info = stat()
        try check("fstat", fstat(fd, &info))
        return Int64(info.st_size)
    }

    package func offset(of fd: Int32) throws(SystemCallFailure) -> Int64 {
        let offset = lseek(fd, 0, SEEK_CUR)
        guard offset >= 0 else { throw SystemCallFailure(call: "lseek", errno: errno) }
        return Int64(offset)
    }

    package func identity(of fd: Int32) throws(SystemCallFailure) -> FileIdentity {
        var info = stat()
        try check("fstat", fstat(fd, &info))
        return FileIdentity(device: UInt64(info.st_dev), inode: UInt64(info.st_ino))
    }

    package func fsync(_ fd: Int32) throws(SystemCallFailure) {
        while true {
            if systemFsync(fd) == 0 { return }
            if errno != EINTR { throw SystemCallFailure(call: "fsync", errno: errno) }
        }
    }

    package func rename(_ source: String, to destination: String) throws(SystemCallFailure) {
        let result = source.withCString { s in destination.withCString { d in systemRename(s, d) } }
        try check("rename", result)
    }

    package func rename(cString source: UnsafePointer<CChar>, to destination: UnsafePointer<CChar>)
        throws(SystemCallFailure)
    {
        try check("rename", systemRename(source, destination))
    }

    package func unlink(cString path: UnsafePointer<CChar>) throws(SystemCallFailure) {
        try check("unlink", systemUnlink(path))
    }

    package func availableSpace(atPath path: String) throws(SystemCallFailure) -> Int64 {
        var info = statvfs()
        try check("statvfs", path.withCString { statvfs($0, &info) })
        let (bytes, overflow) = Int64(clamping: UInt64(info.f_bavail)).multipliedReportingOverflow(
            by: Int64(clamping: UInt64(info.f_frsize)))
        return overflow ? Int64.max : bytes
    }

    package func truncate(_ fd: Int32, to length: Int64) throws(SystemCallFailure) {
        while true {
            if ftruncate(fd, off_t(length)) == 0 { return }
            if errno != EINTR { throw SystemCallFailure(call: "ftruncate", errno: errno) }
        }
    }

    package func link(_ source: String, to destination: String) throws(SystemCallFailure) {
        let result = source.withCString { s in destination.withCString { d in systemLink(s, d) } }
        try check("link", result)
    }

    package func unlink(_ path: String) throws(SystemCallFailure) {
        try check("unlink", path.withCString { systemUnlink($0) })
    }

    package func mkdir(_ path: String, mode: UInt32) throws(SystemCallFailure) {
        try check("mkdir", path.withCString { systemMkdir($0, mode_t(mode)) })
    }

    package func rmdir(_ path: String) throws(SystemCallFailure) {
        try check("rmdir", path.withCString { systemRmdir($0) })
    }

    package func lockExclusively(_ fd: Int32) throws(SystemCallFailure) {
        while true {
            if flock(fd, LOCK_EX | LOCK_NB) == 0 { return }
            if errno != EINTR { throw SystemCallFailure(call: "flock", errno: errno) }
        }
    }

    package func advisoryLock(_ fd: Int32, _ kind: AdvisoryLock) throws(SystemCallFailure) {
        let operation =
            switch kind {
            case .exclusive: LOCK_EX
            case .shared: LOCK_SH
            case .unlocked: LOCK_UN
            }
        while true {
            if flock(fd, operation | LOCK_NB) == 0 { return }
            if errno != EINTR { throw SystemCallFailure(call: "flock", errno: errno) }
        }
    }

    package func contentsOfDirectory(_ path: String) throws(SystemCallFailure) -> [String] {
        guard let dir = path.withCString({ opendir($0) }) else {
            throw SystemCallFailure(call: "opendir", errno: errno)
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

    package func status(atPath path: String) throws(SystemCallFailure) -> FileStatus? {
        var info = stat()
        if path.withCString({ lstat($0, &info) }) != 0 {
            if errno == ENOENT || errno == ENOTDIR { return nil }
            throw SystemCallFailure(call: "lstat", errno: errno)
        }
        return Self.status(info)
    }

    package func status(of fd: Int32) throws(SystemCallFailure) -> FileStatus {
        var info = stat()
        try check("fstat", fstat(fd, &info))
        return Self.status(info)
    }

    /// On Linux, `statx` asking for the link count alone. `fstat` asks for the times as well,
    /// and since Linux 6.13 (multigrain timestamps) a file whose change time was asked for is
    /// stamped with a fine-grained time at its next write, which dirties its inode: on ext4 an
    /// append after each `fstat` took 2.2 µs, against 1.4 µs after this call and 1.0 µs alone.
    package func linkCount(of fd: Int32) throws(SystemCallFailure) -> Int {
        #if os(Linux)
        if let statx = systemStatx {
            let count: Int? = try withUnsafeTemporaryAllocation(byteCount: 256, alignment: 8) {
                (buffer) throws(SystemCallFailure) -> Int? in
                while true {
                    if statx(fd, "", Self.emptyPath, Self.statxLinkCount, buffer.baseAddress) == 0 {
                        // `struct statx`: `stx_mask` at offset 0, `stx_nlink` at offset 16.
                        guard buffer.load(fromByteOffset: 0, as: UInt32.self) & Self.statxLinkCount != 0 else {
                            return nil
                        }
                        return Int(buffer.load(fromByteOffset: 16, as: UInt32.self))
                    }
                    switch errno {
                    case EINTR: continue
                    // A kernel or a sandbox without `statx`: `fstat` answers.
                    case ENOSYS, EINVAL, EPERM: return nil
                    default: throw SystemCallFailure(call: "statx", errno: errno)
                    }
                }
            }
            if let count { return count }
        }
        #endif
        return try status(of: fd).linkCount
    }

    #if os(Linux)
    /// `AT_EMPTY_PATH` of `<fcntl.h>`: the descriptor itself.
    private static let emptyPath: Int32 = 0x1000
    /// `STATX_NLINK` of `<linux/stat.h>`.
    private static let statxLinkCount: UInt32 = 0x4
    #endif

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

    package func kind(of path: String) throws(SystemCallFailure) -> FileKind? {
        var info = stat()
        if path.withCString({ lstat($0, &info) }) != 0 {
            if errno == ENOENT || errno == ENOTDIR { return nil }
            throw SystemCallFailure(call: "lstat", errno: errno)
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
/// (some network and FAT volumes, some directories) gets `fsync`, as SQLite falls back. On Linux
/// `fdatasync(2)`, as SQLite uses there: it writes the data and what reading it back needs (a
/// grown file's size), and skips the times, which the cache never reads.
private let systemFsync: @Sendable (Int32) -> Int32 = { fd in
    #if canImport(Darwin)
    if fcntl(fd, F_FULLFSYNC) == 0 { return 0 }
    return fsync(fd)
    #elseif os(Linux)
    return fdatasync(fd)
    #else
    return fsync(fd)
    #endif
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

/// `statx`, which Glibc declares only under `_GNU_SOURCE` (so Swift does not see it), looked up
/// once in the C library; `nil` on a C library without it.
private let systemStatx:
    (@convention(c) (Int32, UnsafePointer<CChar>, Int32, UInt32, UnsafeMutableRawPointer?) -> Int32)? = {
        guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "statx") else { return nil }
        return unsafeBitCast(
            symbol,
            to: (@convention(c) (Int32, UnsafePointer<CChar>, Int32, UInt32, UnsafeMutableRawPointer?) -> Int32).self)
    }()
#endif
