/// The journal: the cache's append-only record of every change, in the format of the Java
/// `DiskLruCache` (Android's libcore, JakeWharton/DiskLruCache, OkHttp), byte for byte.
///
/// A journal looks like this:
///
///     libcore.io.DiskLruCache
///     1
///     100
///     2
///
///     CLEAN 3400330d1dfc7f3f7f4b8d4d803dfcf6 832 21054
///     DIRTY 335c4c6028171cfddfbaae1a9c313c52
///     CLEAN 335c4c6028171cfddfbaae1a9c313c52 3934 2342
///     REMOVE 335c4c6028171cfddfbaae1a9c313c52
///     DIRTY 1ab96a171faeeee38496d8b330771a7a
///     CLEAN 1ab96a171faeeee38496d8b330771a7a 1600 234
///     READ 335c4c6028171cfddfbaae1a9c313c52
///     READ 3400330d1dfc7f3f7f4b8d4d803dfcf6
///
/// The first five lines are the header: the magic string, the journal version (`1`), the
/// application's version, the number of value slots per entry, and a blank line. Each later
/// line records one state change of one entry:
///
/// - `DIRTY key`: an edit started. A `CLEAN` or `REMOVE` of the same key must follow; when
///   neither does (a crash mid-edit), opening the cache deletes the entry's files.
/// - `CLEAN key len0 len1 …`: an edit was committed, or an edit of an existing entry aborted;
///   one decimal byte length per slot.
/// - `REMOVE key`: the entry was removed, evicted, or its creation aborted.
/// - `READ key`: the entry was read; it only moves the entry in LRU order.
///
/// Value files are named `key.0`, `key.1`, …; an edit writes `key.i.tmp` and renames it over
/// `key.i` when it commits. The journal is rewritten compactly (see ``Journal/rebuildThreshold``)
/// into `journal.tmp`, which replaces `journal` while the old one is kept as `journal.bkp`.
package enum Journal {
    static let fileName = "journal"
    static let temporaryFileName = "journal.tmp"
    static let backupFileName = "journal.bkp"
    static let magic = "libcore.io.DiskLruCache"
    static let version = "1"
    /// Redundant lines that must accumulate (and outnumber live entries) before a rebuild.
    static let rebuildThreshold = 2000
    static let maximumKeyLength = 120

    static func header(appVersion: Int, valueCount: Int) -> String {
        "\(magic)\n\(version)\n\(appVersion)\n\(valueCount)\n\n"
    }

    /// Whether `key` matches `[a-z0-9_-]{1,120}`.
    static func isValidKey(_ key: String) -> Bool {
        var key = key
        return key.withUTF8 { bytes in
            bytes.count > 0 && bytes.count <= maximumKeyLength && bytes.allSatisfy(isKeyByte)
        }
    }

    @inline(__always)
    static func isKeyByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
            UInt8(ascii: "_"), UInt8(ascii: "-"):
            return true
        default:
            return false
        }
    }

    package enum Operation: Equatable {
        case clean(lengths: [Int])
        case dirty
        case remove
        case read
    }

    /// Why a journal could not be replayed. The cache answers by emptying its directory.
    package struct Corruption: Error, CustomStringConvertible {
        package var description: String
    }

    /// The result of parsing a whole journal file.
    package struct Contents {
        /// Body lines in order: key and operation.
        package var records: [(key: String, operation: Operation)]
        /// Whether the file ended with a line that has no newline (a torn write); that line is
        /// ignored and the journal must be rebuilt before anything is appended.
        package var hasUnterminatedLine: Bool
    }

    /// Parses a journal written for `appVersion` and `valueCount`.
    ///
    /// - Throws: ``Corruption`` for a header that does not match or a malformed line.
    /// - Complexity: O(n) in the file's size.
    package static func parse(_ bytes: [UInt8], appVersion: Int, valueCount: Int) throws(Corruption) -> Contents {
        var records: [(key: String, operation: Operation)] = []
        let summary = try parse(bytes, appVersion: appVersion, valueCount: valueCount) { key, operation in
            records.append((key, operation))
        }
        return Contents(records: records, hasUnterminatedLine: summary.hasUnterminatedLine)
    }

    /// What a streaming parse saw besides the records.
    package struct Summary {
        /// How many body records were passed on.
        package var recordCount: Int
        /// Whether the file ended with a line that has no newline (see ``Contents``).
        package var hasUnterminatedLine: Bool
    }

    /// Parses a journal, passing each body record to `body` in order as it is read, with no
    /// intermediate arrays. On ``Corruption`` the records passed so far must be discarded.
    ///
    /// - Complexity: O(n) in the file's size.
    package static func parse(
        _ bytes: [UInt8], appVersion: Int, valueCount: Int, _ body: (String, Operation) -> Void
    ) throws(Corruption) -> Summary {
        let expectedHeader = [magic, version, String(appVersion), String(valueCount), ""]
        let result: Result<Summary, Corruption> = bytes.withUnsafeBufferPointer { buffer in
            let newline = UInt8(ascii: "\n")
            var start = 0
            var lineNumber = 0
            var recordCount = 0
            for i in 0..<buffer.count where buffer[i] == newline {
                let line = UnsafeBufferPointer(rebasing: buffer[start..<i])
                start = i + 1
                if lineNumber < expectedHeader.count {
                    let expected = expectedHeader[lineNumber]
                    lineNumber += 1
                    guard line.elementsEqual(expected.utf8) else {
                        return .failure(
                            Corruption(
                                description:
                                    "unexpected journal header line \(lineNumber): expected \(String(reflecting: expected)), found \(String(reflecting: String(decoding: line, as: UTF8.self)))"
                            ))
                    }
                    continue
                }
                guard let record = parseLine(line, valueCount: valueCount) else {
                    let text = String(decoding: line.prefix(200), as: UTF8.self)
                    return .failure(Corruption(description: "unexpected journal line: \(String(reflecting: text))"))
                }
                body(record.key, record.operation)
                recordCount += 1
            }
            guard lineNumber == expectedHeader.count else {
                return .failure(Corruption(description: "the journal header is incomplete"))
            }
            return .success(Summary(recordCount: recordCount, hasUnterminatedLine: start < buffer.count))
        }
        return try result.get()
    }

    /// The number of newline characters in `bytes`: an upper bound on the journal's records,
    /// for reserving the index's capacity before a replay.
    package static func lineCount(_ bytes: [UInt8]) -> Int {
        bytes.withUnsafeBufferPointer { buffer in
            var count = 0
            for byte in buffer where byte == UInt8(ascii: "\n") { count += 1 }
            return count
        }
    }

    /// Parses one body line; `nil` when it is malformed.
    static func parseLine(_ line: UnsafeBufferPointer<UInt8>, valueCount: Int) -> (key: String, operation: Operation)? {
        let space = UInt8(ascii: " ")
        guard let firstSpace = line.firstIndex(of: space) else { return nil }
        let verb = line[line.startIndex..<firstSpace]
        let rest = line[(firstSpace + 1)...]
        let keyEnd = rest.firstIndex(of: space) ?? rest.endIndex
        let keyBytes = rest[rest.startIndex..<keyEnd]
        guard !keyBytes.isEmpty, keyBytes.count <= maximumKeyLength, keyBytes.allSatisfy(isKeyByte) else {
            return nil
        }
        let key = String(decoding: keyBytes, as: UTF8.self)
        let hasArguments = keyEnd != rest.endIndex
        switch verb.count {
        case 5 where verb.elementsEqual("CLEAN".utf8):
            guard hasArguments else { return nil }
            var lengths: [Int] = []
            lengths.reserveCapacity(valueCount)
            var value = 0
            var digits = 0
            for byte in rest[(keyEnd + 1)...] {
                if byte == space {
                    guard digits > 0 else { return nil }
                    lengths.append(value)
                    value = 0
                    digits = 0
                } else {
                    // At most 18 digits: no overflow, and no value file is that large.
                    guard byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9"), digits < 18 else { return nil }
                    value = value * 10 + Int(byte - UInt8(ascii: "0"))
                    digits += 1
                }
            }
            guard digits > 0 else { return nil }
            lengths.append(value)
            guard lengths.count == valueCount else { return nil }
            return (key, .clean(lengths: lengths))
        case 5 where verb.elementsEqual("DIRTY".utf8):
            return hasArguments ? nil : (key, .dirty)
        case 6 where verb.elementsEqual("REMOVE".utf8):
            return hasArguments ? nil : (key, .remove)
        case 4 where verb.elementsEqual("READ".utf8):
            return hasArguments ? nil : (key, .read)
        default:
            return nil
        }
    }

    /// Appends the journal line for `operation` on `key`, newline included, to `buffer`.
    ///
    /// - Complexity: O(line length), with bulk copies: it runs for every read and commit, and
    ///   for every entry when the journal is rebuilt.
    package static func appendLine(_ operation: Operation, key: String, to buffer: inout [UInt8]) {
        switch operation {
        case .clean(let lengths): appendCleanLine(key: key, lengths: lengths, to: &buffer)
        case .dirty: appendLine(verb: "DIRTY ", key: key, to: &buffer)
        case .remove: appendLine(verb: "REMOVE ", key: key, to: &buffer)
        case .read: appendLine(verb: "READ ", key: key, to: &buffer)
        }
    }

    /// `CLEAN key len0 len1 …` and a newline.
    static func appendCleanLine(key: String, lengths: [Int], to buffer: inout [UInt8]) {
        appendBytes(of: "CLEAN ", to: &buffer)
        appendBytes(of: key, to: &buffer)
        for length in lengths {
            buffer.append(UInt8(ascii: " "))
            appendDecimal(length, to: &buffer)
        }
        buffer.append(UInt8(ascii: "\n"))
    }

    @inline(__always)
    private static func appendLine(verb: StaticString, key: String, to buffer: inout [UInt8]) {
        appendBytes(of: verb, to: &buffer)
        appendBytes(of: key, to: &buffer)
        buffer.append(UInt8(ascii: "\n"))
    }

    @inline(__always)
    private static func appendBytes(of text: StaticString, to buffer: inout [UInt8]) {
        text.withUTF8Buffer { buffer.append(contentsOf: $0) }
    }

    @inline(__always)
    private static func appendBytes(of text: String, to buffer: inout [UInt8]) {
        var text = text
        text.withUTF8 { buffer.append(contentsOf: $0) }
    }

    private static func appendDecimal(_ value: Int, to buffer: inout [UInt8]) {
        guard value > 0 else {
            buffer.append(UInt8(ascii: "0"))
            return
        }
        var digits:
            (
                UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8,
                UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8
            ) =
                (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
        var count = 0
        var remaining = value
        withUnsafeMutableBytes(of: &digits) { storage in
            while remaining > 0 {
                storage[count] = UInt8(ascii: "0") + UInt8(remaining % 10)
                remaining /= 10
                count += 1
            }
            for i in stride(from: count - 1, through: 0, by: -1) { buffer.append(storage[i]) }
        }
    }
}
