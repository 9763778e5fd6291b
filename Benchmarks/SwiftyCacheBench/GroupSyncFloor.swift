import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The floor of durable commits from several threads: each commit's bytes appended and synced
/// through the least a group commit can be. A caller that finds no sync running leads: it
/// takes every commit queued, appends them with one `write`, syncs once, and wakes the others;
/// a caller that finds one running waits for a later one to cover it. No gathering wait, no
/// index, no record format: what threads sharing syncs gain on this disk, whatever a cache
/// does around them.
final class GroupSyncFloor: @unchecked Sendable {
    // @unchecked Sendable is sound: `fd` never changes, and every other stored property is read
    // and written only with `condition` locked.
    private let condition = NSCondition()
    private var pending: [UInt8] = []
    private var queued: UInt64 = 0
    private var durableThrough: UInt64 = 0
    private var isSyncing = false
    private let fd: Int32

    init(path: String) {
        fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_TRUNC | O_CLOEXEC, 0o600)
    }

    deinit { close(fd) }

    /// Returns once `bytes` are appended and synced.
    func commit(_ bytes: [UInt8]) {
        condition.lock()
        queued += 1
        let ticket = queued
        pending += bytes
        while durableThrough < ticket {
            guard !isSyncing else {
                condition.wait()
                continue
            }
            isSyncing = true
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
