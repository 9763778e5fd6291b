import Foundation
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The floors of a set in a directory several processes write: bare system calls over a
/// record and a journal line built once, no index, no checksum, no error handling.
///
/// - ``Kind/locked``, the calls of the protocol's version 1, where a set took the lock
///   exclusively (as removals and batches still do): the record appended to this process's
///   own segment with one `write`, before the lock; `flock` of the lock file (tried without
///   blocking, the core yielded between tries, as the cache does); the journal's end read from
///   a mapped page; what the others appended since this process last looked read with one
///   `pread` (none when nothing changed); the line appended with one `write`; the page's end
///   moved; `flock` off.
/// - ``Kind/unlocked``: the record's `write` and the line's `write` (`O_APPEND`) to the
///   same shared journal, with no lock and no catch-up: what a protocol without a
///   directory-wide lock around the journal's append could reach at best.
/// - ``Kind/sharedLock``, a set's calls in the protocol's version 2: the record's `write`; the
///   lock file's `flock` taken *shared* (appenders run at once; removals, batches, evictions
///   and rebuilds take it exclusively); the line's `write` with `O_APPEND` and its end asked of
///   the kernel (`lseek`); the page's end moved up by a compare-and-swap; `flock` off; then the
///   lines up to the page's end read with one `pread`.
///
/// What two processes running one at once gain over one is what that protocol allows,
/// whatever a cache does around it.
final class SharedFloor {
    enum Kind: String {
        case locked = "floor"
        case unlocked = "floor-unlocked"
        case sharedLock = "floor-shared"
    }

    private let kind: Kind
    private let segment: Int32
    private let journal: Int32
    private let lock: Int32
    private let page: UnsafeMutablePointer<Int64>?
    private var seen: Int64 = 0
    private var buffer = [UInt8](repeating: 0, count: 16 << 10)
    private let record = [UInt8](repeating: 0x78, count: 340)
    private let line = Array("CLEAN floor-key-0000000 320 1 0000000\n".utf8)

    init(_ kind: Kind, directory: URL, name: String) {
        self.kind = kind
        let path = directory.path(percentEncoded: false)
        mkdir(path, 0o700)
        segment = open(path + "/floor-segment-\(name)", O_RDWR | O_CREAT | O_APPEND | O_CLOEXEC, 0o600)
        journal = open(path + "/floor-journal", O_RDWR | O_CREAT | O_APPEND | O_CLOEXEC, 0o600)
        lock = open(path + "/floor-lock", O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        _ = ftruncate(lock, 4096)
        let mapped = mmap(nil, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, lock, 0)
        page = mapped == MAP_FAILED ? nil : mapped?.bindMemory(to: Int64.self, capacity: 1)
    }

    deinit {
        if let page { munmap(page, 4096) }
        close(segment)
        close(journal)
        close(lock)
    }

    func set() {
        _ = record.withUnsafeBytes { write(segment, $0.baseAddress, $0.count) }
        if kind == .sharedLock {
            appendUnderSharedLock()
            return
        }
        guard kind == .locked else {
            _ = line.withUnsafeBytes { write(journal, $0.baseAddress, $0.count) }
            return
        }
        while flock(lock, LOCK_EX | LOCK_NB) != 0 { sched_yield() }
        let end = page?.pointee ?? seen
        if end > seen {
            let wanted = Int(min(Int64(buffer.count), end - seen))
            let count = buffer.withUnsafeMutableBytes { pread(journal, $0.baseAddress, wanted, off_t(seen)) }
            seen += Int64(max(count, 0))
        }
        let appended = line.withUnsafeBytes { write(journal, $0.baseAddress, $0.count) }
        seen += Int64(max(appended, 0))
        page?.pointee = seen
        flock(lock, LOCK_UN)
    }

    private func appendUnderSharedLock() {
        while flock(lock, LOCK_SH | LOCK_NB) != 0 { sched_yield() }
        _ = line.withUnsafeBytes { write(journal, $0.baseAddress, $0.count) }
        let mine = Int64(lseek(journal, 0, SEEK_CUR))
        var end = mine
        if let page {
            let word = UnsafeMutableRawPointer(page).bindMemory(to: Atomic<Int64>.self, capacity: 1)
            var current = word.pointee.load(ordering: .acquiring)
            while current < mine {
                let (exchanged, original) = word.pointee.compareExchange(
                    expected: current, desired: mine, ordering: .acquiringAndReleasing)
                if exchanged { break }
                current = original
            }
            end = max(current, mine)
        }
        flock(lock, LOCK_UN)
        while end > seen {
            let wanted = Int(min(Int64(buffer.count), end - seen))
            let count = buffer.withUnsafeMutableBytes { pread(journal, $0.baseAddress, wanted, off_t(seen)) }
            guard count > 0 else { break }
            seen += Int64(count)
        }
    }
}
