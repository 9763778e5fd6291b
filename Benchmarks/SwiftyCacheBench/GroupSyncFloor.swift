import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The floor of durable commits from several threads: each commit's bytes appended and synced
/// through the least a group commit can be. A caller that finds no sync running leads: it
/// takes every commit queued, appends them with one `write`, syncs once, and wakes the others;
/// a caller that finds one running waits for a later one to cover it. No index, no record
/// format: what threads sharing syncs gain on this disk, whatever a cache does around them.
///
/// With `gathering` writers, a leader first waits until every one of them has a commit queued
/// (each has one at a time, so every group holds them all): the most a group commit can share,
/// its gathering free of timeouts. Without, it takes what is queued (groups of two and two).
final class GroupSyncFloor: @unchecked Sendable {
    // @unchecked Sendable is sound: `fd` never changes, and every other stored property is read
    // and written only with `condition` locked.
    private let condition = NSCondition()
    private var pending: [UInt8] = []
    private var queued: UInt64 = 0
    private var durableThrough: UInt64 = 0
    private var isSyncing = false
    private let fd: Int32
    private let gathering: UInt64

    init(path: String, gathering writers: Int = 1) {
        fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_TRUNC | O_CLOEXEC, 0o600)
        gathering = UInt64(max(writers, 1))
    }

    deinit { close(fd) }

    /// Returns once `bytes` are appended and synced.
    func commit(_ bytes: [UInt8]) {
        condition.lock()
        queued += 1
        let ticket = queued
        pending += bytes
        if gathering > 1 { condition.broadcast() }
        while durableThrough < ticket {
            guard !isSyncing else {
                condition.wait()
                continue
            }
            isSyncing = true
            while queued - durableThrough < gathering { condition.wait() }
            let group = pending
            let through = queued
            pending.removeAll(keepingCapacity: true)
            condition.unlock()
            _ = group.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
            #if os(Linux)
            _ = fdatasync(fd)
            #else
            _ = fsync(fd)
            #endif
            condition.lock()
            durableThrough = through
            isSyncing = false
            condition.broadcast()
        }
        condition.unlock()
    }
}
