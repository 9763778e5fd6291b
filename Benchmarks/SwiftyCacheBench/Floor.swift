import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The file-system floor: the bare system calls the cache's design needs, with no index, no
/// locking and no error handling beyond stopping. The engine is measured against this.
///
/// - set: per slot, create `key.i.tmp`, write, close, rename to `key.i`; one journal line,
///   buffered and written 8 KiB at a time.
/// - get: per slot, open, fstat, read everything, close.
/// - remove: per slot, unlink; one buffered journal line.
final class Floor {
    let directory: String
    let valueCount: Int
    /// Prepended to every file name, so that the floor can share the engine's directory.
    let prefix: String
    private var journal: Int32
    private var journalBuffer: [UInt8] = []
    private var readBuffer = [UInt8](repeating: 0, count: 1 << 20)

    /// - Parameters:
    ///   - directory: Where the floor's files go. The engine workloads pass the engine's own
    ///     cache directory: this file system slows down one directory at a time, for seconds,
    ///     and sharing it makes such a stretch fall on both contenders alike.
    ///   - prefix: Prepended to file names (`floor-journal`, `floor-key.0`): never a name the
    ///     engine uses while it runs.
    init(directory: URL, valueCount: Int, prefix: String = "floor-") {
        self.directory = directory.path(percentEncoded: false)
        self.valueCount = valueCount
        self.prefix = prefix
        mkdir(self.directory, 0o700)
        journal = open(self.directory + "/" + prefix + "journal", O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0o600)
    }

    deinit {
        flush()
        close(journal)
    }

    func set(_ key: String, _ values: [Data]) {
        for (slot, value) in values.enumerated() {
            let clean = directory + "/" + prefix + key + "." + String(slot)
            let dirty = clean + ".tmp"
            let fd = open(dirty, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0o600)
            value.withUnsafeBytes { _ = write(fd, $0.baseAddress, $0.count) }
            close(fd)
            rename(dirty, clean)
        }
        appendLine("CLEAN " + key + values.map { " \($0.count)" }.joined())
    }

    /// Reads every slot; returns the bytes read, so the work cannot be optimized away.
    func get(_ key: String) -> Int {
        var total = 0
        for slot in 0..<valueCount {
            let fd = open(directory + "/" + prefix + key + "." + String(slot), O_RDONLY | O_CLOEXEC | O_NOFOLLOW)
            guard fd >= 0 else { return 0 }
            var info = stat()
            fstat(fd, &info)
            let size = Int(info.st_size)
            if readBuffer.count < size { readBuffer = [UInt8](repeating: 0, count: size) }
            total += readBuffer.withUnsafeMutableBytes { pread(fd, $0.baseAddress, size, 0) }
            close(fd)
        }
        return total
    }

    func remove(_ key: String) {
        for slot in 0..<valueCount { unlink(directory + "/" + prefix + key + "." + String(slot)) }
        appendLine("REMOVE " + key)
    }

    private func appendLine(_ line: String) {
        journalBuffer.append(contentsOf: line.utf8)
        journalBuffer.append(UInt8(ascii: "\n"))
        if journalBuffer.count >= 8192 { flush() }
    }

    func flush() {
        guard !journalBuffer.isEmpty else { return }
        journalBuffer.withUnsafeBytes { _ = write(journal, $0.baseAddress, $0.count) }
        journalBuffer.removeAll(keepingCapacity: true)
    }
}
