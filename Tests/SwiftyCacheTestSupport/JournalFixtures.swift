public import Foundation

/// Reading and writing journals and value files the way the Java DiskLruCache tests do.
public enum JournalFixture {
    public static let magic = "libcore.io.DiskLruCache"

    public static let packedMagic = "swiftycache.packed"
    /// The magic of a packed journal that may hold `BATCH` lines.
    public static let packedBatchMagic = "swiftycache.packed2"
    /// The magic of a packed journal whose segments are its log (`syncsWrites`).
    public static let packedLogMagic = "swiftycache.packed-log"

    /// Whether `firstLine` is a packed journal's magic, any of them.
    static func isPackedMagic(_ firstLine: String?) -> Bool {
        firstLine == packedMagic || firstLine == packedBatchMagic || firstLine == packedLogMagic
    }

    /// The body lines of the journal in `directory` (after the header). A packed journal's
    /// lines are given as file storage writes them: `CLEAN` without the record's segment and
    /// offset, and no `MOVE` or `TAIL` lines; ``rawBodyLines(in:)`` has them as they are.
    public static func bodyLines(in directory: URL) throws -> [String] {
        let lines = try allLines(in: directory)
        guard isPackedMagic(lines.first) else { return Array(lines.dropFirst(5)) }
        return lines.dropFirst(6).map(withoutCheck).compactMap { line in
            if line.hasPrefix("MOVE ") || line.hasPrefix("TAIL ") { return nil }
            guard line.hasPrefix("CLEAN ") else { return line }
            return line.split(separator: " ").dropLast(2).joined(separator: " ")
        }
    }

    /// The body lines of the journal in `directory` as they are, but for the check a packed
    /// journal's lines end with (` ~` and 16 hex digits, see `JournalLineCheck`), which
    /// ``allLines(in:)`` keeps.
    public static func rawBodyLines(in directory: URL) throws -> [String] {
        let lines = try allLines(in: directory)
        guard isPackedMagic(lines.first) else { return Array(lines.dropFirst(5)) }
        return lines.dropFirst(6).map(withoutCheck)
    }

    /// `line` without a packed journal line's check, if it ends with one.
    public static func withoutCheck(_ line: String) -> String {
        let utf8 = Array(line.utf8)
        guard utf8.count > 18, utf8[utf8.count - 18] == UInt8(ascii: " "), utf8[utf8.count - 17] == UInt8(ascii: "~"),
            utf8.suffix(16).allSatisfy({ (0x30...0x39).contains($0) || (0x61...0x66).contains($0) })
        else { return line }
        return String(decoding: utf8.dropLast(18), as: UTF8.self)
    }

    /// The names in `directory` other than packed storage's own (its segments and its space
    /// reserve, `journal.reserve`), sorted.
    public static func fileNamesBesideSegments(in directory: URL) throws -> [String] {
        try fileNames(in: directory).filter {
            !($0.hasPrefix("segment-") && $0.hasSuffix(".pack")) && $0 != "journal.reserve"
        }
    }

    /// Every line of the journal, header included; a final newline does not make an empty line.
    /// A packed journal's `BLOCK` lines are given as the `CLEAN` lines they stand for (without
    /// a check); ``blockLineCount(in:)`` counts them.
    public static func allLines(in directory: URL) throws -> [String] {
        let bytes = try [UInt8](Data(contentsOf: directory.appending(path: "journal")))
        var lines = bytes.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false).map(Array.init)
        if lines.last == [] { lines.removeLast() }
        let valueCount = lines.count > 3 ? Int(String(decoding: lines[3], as: UTF8.self)) ?? 0 : 0
        return try lines.flatMap { line -> [String] in
            guard line.starts(with: Array("BLOCK ".utf8)) else { return [String(decoding: line, as: UTF8.self)] }
            return try expandBlock(line, valueCount: valueCount)
        }
    }

    /// The `BLOCK` lines of the journal in `directory`.
    public static func blockLineCount(in directory: URL) throws -> Int {
        let bytes = try [UInt8](Data(contentsOf: directory.appending(path: "journal")))
        return bytes.split(separator: UInt8(ascii: "\n")).filter { $0.starts(with: Array("BLOCK ".utf8)) }.count
    }

    public struct MalformedBlock: Error {}

    /// The `CLEAN` lines a `BLOCK` line stands for, read by the format's description (the
    /// engine's `JournalBlock`), independently of its code: after `BLOCK `, escaped bytes (`0x7F
    /// 0x01` a newline, `0x7F 0x02` a `0x7F`) up to the 18-byte check; per entry, a key (a byte
    /// n, then n bytes, or n & 0x7F bytes of a hex key when n has its top bit), a varint per
    /// slot, the segment and the offset.
    public static func expandBlock(_ line: [UInt8], valueCount: Int) throws -> [String] {
        guard line.count > 6 + 18 else { throw MalformedBlock() }
        var payload: [UInt8] = []
        var index = 6
        let end = line.count - 18
        while index < end {
            if line[index] == 0x7F {
                guard index + 1 < end else { throw MalformedBlock() }
                switch line[index + 1] {
                case 0x01: payload.append(0x0A)
                case 0x02: payload.append(0x7F)
                default: throw MalformedBlock()
                }
                index += 2
            } else {
                payload.append(line[index])
                index += 1
            }
        }
        var position = 0
        func varint() throws -> UInt64 {
            var value: UInt64 = 0
            var shift: UInt64 = 0
            while position < payload.count, shift < 64 {
                let byte = payload[position]
                position += 1
                value |= UInt64(byte & 0x7F) << shift
                if byte & 0x80 == 0 { return value }
                shift += 7
            }
            throw MalformedBlock()
        }
        var result: [String] = []
        while position < payload.count {
            let head = payload[position]
            let count = Int(head & 0x7F)
            position += 1
            guard position + count <= payload.count else { throw MalformedBlock() }
            let stored = payload[position..<(position + count)]
            position += count
            let key =
                head & 0x80 != 0
                ? stored.map { String($0, radix: 16).count == 1 ? "0" + String($0, radix: 16) : String($0, radix: 16) }
                    .joined()
                : String(decoding: stored, as: UTF8.self)
            var fields = ["CLEAN", key]
            for _ in 0..<(valueCount + 2) { fields.append(String(try varint())) }
            result.append(fields.joined(separator: " "))
        }
        return result
    }

    /// Writes a journal with the standard header for `appVersion` and `valueCount`.
    public static func write(
        _ bodyLines: [String], to directory: URL, appVersion: Int = 100, valueCount: Int = 2,
        header: [String]? = nil, terminated: Bool = true
    ) throws {
        let headerLines = header ?? [magic, "1", String(appVersion), String(valueCount), ""]
        var text = (headerLines + bodyLines).joined(separator: "\n")
        if terminated { text += "\n" }
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        try Data(text.utf8).write(to: directory.appending(path: "journal"))
    }

    /// Writes `contents` to `name` in `directory`.
    public static func writeFile(_ name: String, _ contents: String, in directory: URL) throws {
        try Data(contents.utf8).write(to: directory.appending(path: name))
    }

    public static func fileExists(_ name: String, in directory: URL) -> Bool {
        FileManager.default.fileExists(atPath: directory.appending(path: name).path(percentEncoded: false))
    }

    public static func readFile(_ name: String, in directory: URL) throws -> String {
        try String(contentsOf: directory.appending(path: name), encoding: .utf8)
    }

    /// The names in `directory`, sorted.
    public static func fileNames(in directory: URL) throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: directory.path(percentEncoded: false)).sorted()
    }

    /// The total byte size of the value files (`key.N`) in `directory`.
    public static func valueBytes(in directory: URL) throws -> Int {
        var total = 0
        for name in try fileNames(in: directory)
        where name.range(of: #"^[a-z0-9_-]+\.[0-9]+$"#, options: .regularExpression) != nil {
            let attributes = try FileManager.default.attributesOfItem(
                atPath: directory.appending(path: name).path(percentEncoded: false))
            total += (attributes[.size] as? Int) ?? 0
        }
        return total
    }
}
