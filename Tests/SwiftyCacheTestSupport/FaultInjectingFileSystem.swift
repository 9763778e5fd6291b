import Dispatch
package import SwiftyCacheCore

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The real file system with faults on demand: fails chosen calls with a chosen `errno`.
///
/// ```swift
/// let fs = FaultInjectingFileSystem()
/// fs.failCalls(named: ["write"], errno: ENOSPC)          // every write from now on
/// fs.failCall(number: 12, errno: EIO)                     // only the 12th call counted from now
/// ```
package final class FaultInjectingFileSystem: FileSystem {
    private struct Plan {
        var callCount = 0
        var failingNames: Set<String> = []
        var failingNameErrno: Int32 = 0
        var failingPathSubstring: String?
        var failAtCall: Int?
        var failAtCallErrno: Int32 = 0
        var failAtNamedCall: (name: String, number: Int, errno: Int32)?
        var injectedFaults = 0
        var callsByName: [String: Int] = [:]
        var writeHold: (threshold: Int, hold: CallHold)?
        var shortWrite: (threshold: Int, skipped: Int, kept: Int?, errno: Int32)?
        var failsNextWrite: Int32?
        var unlinkHold: (pathSubstring: String, hold: CallHold)?
        var readHold: (sizes: Range<Int>, hold: CallHold)?
        var pageCache = PageCache.unknown
        /// With ``recordSyncs()``: each file's size at its last successful `fsync`, by identity.
        var syncedSizes: [FileIdentity: Int64]?
        /// With ``recordSyncs()``: the bytes each failed `fsync` should have covered.
        var droppedRanges: [FileIdentity: [Range<Int64>]] = [:]
    }

    /// What ``readIfCached(_:into:at:)`` and ``openIfCached(cString:flags:)`` report, so that
    /// tests of the reads that must not block do not depend on what the kernel keeps in memory.
    package enum PageCache: Sendable {
        /// As a system that cannot tell: every read from memory is refused (the default).
        case unknown
        /// Everything is in memory: the calls read and open the blocking way.
        case holdsEverything
        /// Nothing is in memory (as after a drop of the kernel's caches): every call refused.
        case holdsNothing
    }

    private let base = SystemFileSystem()
    private let plan = LockedState(Plan())

    package init() {}

    /// Fails every call whose name is in `names` (and whose path contains `pathSubstring`, if given).
    package func failCalls(named names: Set<String>, errno: Int32, pathContaining pathSubstring: String? = nil) {
        plan.withLock {
            $0.failingNames = names
            $0.failingNameErrno = errno
            $0.failingPathSubstring = pathSubstring
        }
    }

    /// Fails the `number`th call (1-based) counted from now, whatever it is.
    package func failCall(number: Int, errno: Int32) {
        plan.withLock {
            $0.failAtCall = $0.callCount + number
            $0.failAtCallErrno = errno
        }
    }

    /// Fails the `occurrence`th call (1-based) named `name` counted from now, such as the
    /// second `fsync`.
    package func failCall(named name: String, occurrence: Int, errno: Int32) {
        plan.withLock { $0.failAtNamedCall = (name, ($0.callsByName[name] ?? 0) + occurrence, errno) }
    }

    /// Holds the next `write` of more than `bytes` bytes, on whatever thread makes it, until
    /// the returned hold is released: for tests of what goes on meanwhile.
    package func holdNextWrite(largerThan bytes: Int) -> CallHold {
        let hold = CallHold()
        plan.withLock { $0.writeHold = (bytes, hold) }
        return hold
    }

    /// Writes only the first `kept` bytes of the next `write` of more than `bytes` bytes (a
    /// short write, as a disk filling up makes) and fails the `write` that follows with
    /// `errno`: the file keeps a torn piece of what the caller meant to write.
    package func shortenNextWrite(largerThan bytes: Int, keeping kept: Int, thenFailingWith errno: Int32) {
        plan.withLock { $0.shortWrite = (bytes, 0, kept, errno) }
    }

    /// Shortens the `occurrence`th `write` (1-based) counted from now to half its bytes (at
    /// least one) and fails the `write` that follows with `errno`: a sweep's torn write.
    package func shortenWrite(occurrence: Int, thenFailingWith errno: Int32) {
        plan.withLock { $0.shortWrite = (0, occurrence - 1, nil, errno) }
    }

    /// Holds the next `read` into a buffer of a size in `sizes`, *after* it read, until the
    /// returned hold is released: the caller then goes on with what it read before whatever
    /// happened meanwhile.
    package func holdNextRead(ofSizeIn sizes: Range<Int>) -> CallHold {
        let hold = CallHold()
        plan.withLock { $0.readHold = (sizes, hold) }
        return hold
    }

    /// Holds the next `unlink` of a path containing `pathSubstring` until the returned hold is
    /// released.
    package func holdNextUnlink(pathContaining pathSubstring: String) -> CallHold {
        let hold = CallHold()
        plan.withLock { $0.unlinkHold = (pathSubstring, hold) }
        return hold
    }

    /// What the reads from memory find from now on.
    package func setPageCache(_ pageCache: PageCache) {
        plan.withLock { $0.pageCache = pageCache }
    }

    /// Records from now on each file's size at its last successful `fsync`: what a power cut
    /// that drops everything unsynced would leave (``syncedSize(ofFileAt:)``).
    package func recordSyncs() {
        plan.withLock { $0.syncedSizes = [:] }
    }

    /// The size the file at `path` had at its last successful `fsync` since ``recordSyncs()``;
    /// `nil` when it was never synced.
    package func syncedSize(ofFileAt path: String) -> Int64? {
        guard let fd = try? base.open(path, flags: OpenFlags.readOnly, mode: 0) else { return nil }
        defer { try? base.close(fd) }
        guard let identity = try? base.identity(of: fd) else { return nil }
        return plan.withLock { $0.syncedSizes?[identity] }
    }

    /// The bytes of the file at `path` that a failed `fsync` since ``recordSyncs()`` should
    /// have covered: the kernel may have dropped them, and reports the next sync a success.
    package func droppedRanges(ofFileAt path: String) -> [Range<Int64>] {
        guard let fd = try? base.open(path, flags: OpenFlags.readOnly, mode: 0) else { return [] }
        defer { try? base.close(fd) }
        guard let identity = try? base.identity(of: fd) else { return [] }
        return plan.withLock { $0.droppedRanges[identity] ?? [] }
    }

    /// Stops injecting faults.
    package func heal() {
        plan.withLock {
            $0.failingNames = []
            $0.failAtCall = nil
            $0.failAtNamedCall = nil
            $0.shortWrite = nil
            $0.failsNextWrite = nil
        }
    }

    /// Calls made so far.
    package var callCount: Int { plan.withLock { $0.callCount } }
    /// Calls of one system call made so far, such as `calls(to: "fsync")`.
    package func calls(to name: String) -> Int { plan.withLock { $0.callsByName[name] ?? 0 } }
    /// Faults injected so far.
    package var injectedFaults: Int { plan.withLock { $0.injectedFaults } }

    private func check(_ name: String, path: String? = nil) throws(SystemCallFailure) {
        let failure: Int32? = plan.withLock { plan in
            plan.callCount += 1
            plan.callsByName[name, default: 0] += 1
            if plan.failAtCall == plan.callCount {
                plan.injectedFaults += 1
                return plan.failAtCallErrno
            }
            if let named = plan.failAtNamedCall, named.name == name, named.number == plan.callsByName[name] {
                plan.injectedFaults += 1
                return named.errno
            }
            if plan.failingNames.contains(name) {
                if let substring = plan.failingPathSubstring {
                    guard let path, path.contains(substring) else { return nil }
                }
                plan.injectedFaults += 1
                return plan.failingNameErrno
            }
            return nil
        }
        if let failure { throw SystemCallFailure(call: name, errno: failure) }
    }

    package func open(_ path: String, flags: Int32, mode: UInt32) throws(SystemCallFailure) -> Int32 {
        try check("open", path: path)
        let fd = try base.open(path, flags: flags, mode: mode)
        // A new file may reuse a deleted one's inode: what was recorded of that one goes.
        if flags & O_CREAT != 0, plan.withLock({ $0.syncedSizes != nil }), (try? base.size(of: fd)) == 0,
            let identity = try? base.identity(of: fd)
        {
            plan.withLock {
                $0.syncedSizes?[identity] = nil
                $0.droppedRanges[identity] = nil
            }
        }
        return fd
    }
    package func close(_ fd: Int32) throws(SystemCallFailure) {
        // A close always releases the descriptor, even when it reports an error.
        defer { try? base.close(fd) }
        try check("close")
    }
    package func write(_ fd: Int32, _ buffer: UnsafeRawBufferPointer) throws(SystemCallFailure) -> Int {
        let hold = plan.withLock { plan -> CallHold? in
            guard let (threshold, hold) = plan.writeHold, buffer.count > threshold else { return nil }
            plan.writeHold = nil
            return hold
        }
        if let hold, let errno = hold.holdAndWaitForRelease() {
            throw SystemCallFailure(call: "write", errno: errno)
        }
        try check("write")
        let short = plan.withLock { plan -> Int? in
            if let errno = plan.failsNextWrite {
                plan.failsNextWrite = nil
                plan.injectedFaults += 1
                return -Int(errno)
            }
            guard let (threshold, skipped, kept, errno) = plan.shortWrite, buffer.count > threshold else { return nil }
            guard skipped == 0 else {
                plan.shortWrite?.skipped = skipped - 1
                return nil
            }
            plan.shortWrite = nil
            plan.failsNextWrite = errno
            plan.injectedFaults += 1
            return min(kept ?? max(1, buffer.count / 2), buffer.count)
        }
        guard let short else { return try base.write(fd, buffer) }
        if short < 0 { throw SystemCallFailure(call: "write", errno: Int32(-short)) }
        return try base.write(fd, UnsafeRawBufferPointer(rebasing: buffer[..<short]))
    }
    package func read(_ fd: Int32, into buffer: UnsafeMutableRawBufferPointer, at offset: Int64)
        throws(SystemCallFailure)
        -> Int
    {
        try check("read")
        let count = try base.read(fd, into: buffer, at: offset)
        let hold = plan.withLock { plan -> CallHold? in
            guard let (sizes, hold) = plan.readHold, sizes.contains(buffer.count) else { return nil }
            plan.readHold = nil
            return hold
        }
        if let hold, let errno = hold.holdAndWaitForRelease() { throw SystemCallFailure(call: "read", errno: errno) }
        return count
    }
    package func readIfCached(_ fd: Int32, into buffer: UnsafeMutableRawBufferPointer, at offset: Int64)
        throws(SystemCallFailure) -> Int?
    {
        guard plan.withLock({ $0.pageCache }) == .holdsEverything else { return nil }
        try check("preadv2")
        return try base.read(fd, into: buffer, at: offset)
    }
    package func openIfCached(cString path: UnsafePointer<CChar>, flags: Int32) throws(SystemCallFailure) -> Int32? {
        guard plan.withLock({ $0.pageCache }) == .holdsEverything else { return nil }
        let name = String(cString: path)
        try check("openat2", path: name)
        return try base.open(name, flags: flags, mode: 0)
    }
    package func size(of fd: Int32) throws(SystemCallFailure) -> Int64 {
        try check("fstat")
        return try base.size(of: fd)
    }
    package func offset(of fd: Int32) throws(SystemCallFailure) -> Int64 {
        try check("lseek")
        return try base.offset(of: fd)
    }
    package func identity(of fd: Int32) throws(SystemCallFailure) -> FileIdentity {
        try check("fstat")
        return try base.identity(of: fd)
    }
    package func fsync(_ fd: Int32) throws(SystemCallFailure) {
        do {
            try check("fsync")
        } catch {
            noteDroppedBySync(fd)
            throw error
        }
        let records = plan.withLock { $0.syncedSizes != nil }
        // The size before the sync: a write racing it may or may not be covered.
        let size = records ? try? base.size(of: fd) : nil
        try base.fsync(fd)
        if let size, let identity = try? base.identity(of: fd) {
            plan.withLock { $0.syncedSizes?[identity] = size }
        }
    }
    /// Records what a failed sync of `fd` leaves undurable: its bytes past the last good sync.
    private func noteDroppedBySync(_ fd: Int32) {
        guard plan.withLock({ $0.syncedSizes != nil }), let size = try? base.size(of: fd),
            let identity = try? base.identity(of: fd)
        else { return }
        plan.withLock { plan in
            let synced = plan.syncedSizes?[identity] ?? 0
            if size > synced { plan.droppedRanges[identity, default: []].append(synced..<size) }
        }
    }

    package func rename(_ source: String, to destination: String) throws(SystemCallFailure) {
        try check("rename", path: source)
        try base.rename(source, to: destination)
    }
    package func availableSpace(atPath path: String) throws(SystemCallFailure) -> Int64 {
        try check("statvfs", path: path)
        return try base.availableSpace(atPath: path)
    }
    package func truncate(_ fd: Int32, to length: Int64) throws(SystemCallFailure) {
        try check("ftruncate")
        try base.truncate(fd, to: length)
    }
    package func link(_ source: String, to destination: String) throws(SystemCallFailure) {
        try check("link", path: source)
        try base.link(source, to: destination)
    }
    package func unlink(_ path: String) throws(SystemCallFailure) {
        let hold = plan.withLock { plan -> CallHold? in
            guard let (substring, hold) = plan.unlinkHold, path.contains(substring) else { return nil }
            plan.unlinkHold = nil
            return hold
        }
        if let hold, let errno = hold.holdAndWaitForRelease() {
            throw SystemCallFailure(call: "unlink", errno: errno)
        }
        try check("unlink", path: path)
        try base.unlink(path)
    }
    package func mkdir(_ path: String, mode: UInt32) throws(SystemCallFailure) {
        try check("mkdir", path: path)
        try base.mkdir(path, mode: mode)
    }
    package func rmdir(_ path: String) throws(SystemCallFailure) {
        try check("rmdir", path: path)
        try base.rmdir(path)
    }
    package func lockExclusively(_ fd: Int32) throws(SystemCallFailure) {
        try check("flock")
        try base.lockExclusively(fd)
    }
    package func advisoryLock(_ fd: Int32, _ kind: AdvisoryLock) throws(SystemCallFailure) {
        try check("flock")
        try base.advisoryLock(fd, kind)
    }
    package func contentsOfDirectory(_ path: String) throws(SystemCallFailure) -> [String] {
        try check("readdir", path: path)
        return try base.contentsOfDirectory(path)
    }
    package func kind(of path: String) throws(SystemCallFailure) -> FileKind? {
        try check("lstat", path: path)
        return try base.kind(of: path)
    }
    package func status(atPath path: String) throws(SystemCallFailure) -> FileStatus? {
        try check("lstat", path: path)
        return try base.status(atPath: path)
    }
    package func status(of fd: Int32) throws(SystemCallFailure) -> FileStatus {
        try check("fstat")
        return try base.status(of: fd)
    }
}

/// A call held by ``FaultInjectingFileSystem/holdNextWrite(largerThan:)`` or
/// ``FaultInjectingFileSystem/holdNextUnlink(pathContaining:)``.
package final class CallHold: Sendable {
    private let reached = DispatchSemaphore(value: 0)
    private let released = DispatchSemaphore(value: 0)
    private let failure = LockedState<Int32?>(nil)
    private let reachedFlag = LockedState(false)

    init() {}

    /// Whether the held call has started (without waiting for it).
    package var isHeld: Bool { reachedFlag.withLock { $0 } }

    /// Waits until the held call has started; `false` if none did within `seconds`.
    package func waitUntilHeld(seconds: Double = 30) -> Bool {
        reached.wait(timeout: .now() + seconds) == .success
    }

    /// Lets the held call go on, or fail with `errno`.
    package func release(failingWith errno: Int32? = nil) {
        failure.withLock { $0 = errno }
        released.signal()
    }

    /// Called by the held call: signals that it is held and waits for the release.
    func holdAndWaitForRelease() -> Int32? {
        reachedFlag.withLock { $0 = true }
        reached.signal()
        // Bounded, so that a test that fails before releasing cannot hang the suite.
        _ = released.wait(timeout: .now() + 60)
        return failure.withLock { $0 }
    }
}
