import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The packed floor: the bare system calls packed storage needs, with an in-memory index and
/// nothing else (no checksum, no LRU order, no locking, no error handling beyond stopping).
///
/// - set: build the record (key, lengths and values back to back) and append it to the
///   segment with one `write`; append the `CLEAN` line naming it with one `write`.
/// - get: one `pread` of the record.
/// - remove: append the `REMOVE` line with one `write`.
final class PackedFloor {
    private let segment: Int32
    private let journal: Int32
    private var end: Int64 = 0
    private var index: [String: (offset: Int64, length: Int)] = [:]
    private var record: [UInt8] = []
    private var readBuffer = [UInt8](repeating: 0, count: 1 << 20)

    init(directory: URL) {
        let path = directory.path(percentEncoded: false)
        mkdir(path, 0o700)
        segment = open(path + "/floor-segment", O_RDWR | O_CREAT | O_APPEND | O_CLOEXEC, 0o600)
        journal = open(path + "/floor-journal", O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0o600)
    }

    deinit {
        close(segment)
        close(journal)
    }

    func set(_ key: String, _ values: [Data]) {
        record.removeAll(keepingCapacity: true)
        record.append(contentsOf: key.utf8)
        for value in values {
            let length = UInt32(value.count)
            withUnsafeBytes(of: length.littleEndian) { record.append(contentsOf: $0) }
        }
        for value in values { record.append(contentsOf: value) }
        let written = record.withUnsafeBytes { write(segment, $0.baseAddress, $0.count) }
        index[key] = (end, record.count)
        end += Int64(max(written, 0))
        appendLine("CLEAN \(key) \(values.map { String($0.count) }.joined(separator: " ")) 1 \(end)\n")
    }

    /// Reads the record; returns the bytes read, so the work cannot be optimized away.
    func get(_ key: String) -> Int {
        guard let (offset, length) = index[key] else { return 0 }
        if readBuffer.count < length { readBuffer = [UInt8](repeating: 0, count: length) }
        return readBuffer.withUnsafeMutableBytes { pread(segment, $0.baseAddress, length, off_t(offset)) }
    }

    func remove(_ key: String) {
        index[key] = nil
        appendLine("REMOVE \(key)\n")
    }

    private func appendLine(_ line: String) {
        var line = line
        line.withUTF8 { _ = write(journal, $0.baseAddress, $0.count) }
    }
}
