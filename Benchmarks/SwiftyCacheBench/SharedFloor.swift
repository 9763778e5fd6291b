import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The floor of a set in a directory several processes write: the bare system calls the
/// sharing protocol makes, with an in-memory index of the lines read and nothing else (no
/// checksum, no LRU order, no accounting, no error handling beyond stopping).
///
/// - the record appended to this process's own segment with one `write`, before the lock;
/// - `flock` of the lock file (tried without blocking, the core yielded between tries, as the
///   cache does); the journal's end read from a mapped page; the others' lines
///   since this process last looked read with one `pread` (none when nothing changed) and
///   indexed; the `CLEAN` line appended with one `write`; the page's end moved; `flock` off.
///
/// What two processes running it at once gain over one is what the protocol's lock allows,
/// whatever a cache does around it.
final class SharedFloor {
    private let segment: Int32
    private let journal: Int32
    private let lock: Int32
    private let page: UnsafeMutablePointer<Int64>?
    private var segmentEnd: Int64 = 0
    private var seen: Int64 = 0
    private var index: [Substring: Int] = [:]
    private var buffer = [UInt8](repeating: 0, count: 16 << 10)
    private var record: [UInt8] = []

    init(directory: URL, name: String) {
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

    func set(_ key: String, _ value: Data) {
        record.removeAll(keepingCapacity: true)
        record.append(contentsOf: key.utf8)
        record.append(contentsOf: value)
        let written = record.withUnsafeBytes { write(segment, $0.baseAddress, $0.count) }
        let offset = segmentEnd
        segmentEnd += Int64(max(written, 0))
        // As the cache waits: trying without blocking, yielding the core between tries (a
        // blocking `flock` puts the waiter to sleep, and two processes then run at half speed).
        while flock(lock, LOCK_EX | LOCK_NB) != 0 { sched_yield() }
        let end = page?.pointee ?? seen
        if end > seen { catchUp(to: end) }
        let line = Array("CLEAN \(key) \(value.count) 1 \(offset)\n".utf8)
        let appended = line.withUnsafeBytes { write(journal, $0.baseAddress, $0.count) }
        seen += Int64(max(appended, 0))
        page?.pointee = seen
        flock(lock, LOCK_UN)
    }

    /// Reads the lines between what this process saw and `end`, and indexes each line's key.
    private func catchUp(to end: Int64) {
        let wanted = Int(min(Int64(buffer.count), end - seen))
        let count = buffer.withUnsafeMutableBytes { pread(journal, $0.baseAddress, wanted, off_t(seen)) }
        guard count > 0 else { return }
        var start = 0
        for position in 0..<count where buffer[position] == UInt8(ascii: "\n") {
            let line = String(decoding: buffer[start..<position], as: UTF8.self)
            if let key = line.split(separator: " ").dropFirst().first { index[key] = start }
            start = position + 1
        }
        seen += Int64(count)
    }
}
