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
/// `key.i` when it commits. The journal is rebuilt, one line per entry (see ``Journal/rebuildThreshold``)
/// into `journal.tmp`, which replaces `journal` while the old one is kept as `journal.bkp`.
///
/// A directory in packed storage (`Storage/Packed/`) keeps the same lines under its own header,
/// which the Java library and file storage refuse, with two differences: a `CLEAN` line ends
/// with the segment and offset of the entry's record (`0 0` when every slot is a file), and
/// `MOVE key segment offset` records that compaction copied the record elsewhere (it does not
/// count as a use):
///
///     swiftycache.packed
///     1
///     100
///     2
///     16384
///
///     CLEAN 3400330d1dfc7f3f7f4b8d4d803dfcf6 832 21054 1 16 ~b542c4fe2c1d212e
///     CLEAN 335c4c6028171cfddfbaae1a9c313c52 3934 2342 1 905 ~78564266fd670164
///     READ 3400330d1dfc7f3f7f4b8d4d803dfcf6
///     MOVE 335c4c6028171cfddfbaae1a9c313c52 2 16 ~785642662547476f
///
/// A rebuild of a packed journal writes the committed entries as `BLOCK` lines, up to 32 in a
/// line, in binary (``JournalBlock``: about 43 bytes an entry with a 64-digit hexadecimal key,
/// where its `CLEAN` line takes about 107); they replay as those `CLEAN` lines would.
///
/// A batch (`DiskLRUCache.write(_:)`) is one `BATCH` line: its members' `CLEAN` and `REMOVE`
/// lines, each with its check, after tabs, then the check of the whole line. It replays all
/// or nothing. A journal that may hold one starts with ``packedBatchMagic`` instead, which
/// releases before batches refuse. Packed storage writes no `READ` line (a read writes
/// nothing); journals of earlier releases have them, and they replay as uses.
///
/// The fifth header line is the directory's inline limit: a slot longer than it is a file. Each
/// body line but `READ` ends with its check (``JournalLineCheck``: ` ~`, the key's tag and the line's
/// checksum), so that a damaged line costs the entry it names, not the cache; journals written
/// before the check existed have lines without it, which read as they always did.
package enum Journal {
    static let magic = "libcore.io.DiskLruCache"
    static let version = "1"
    /// Redundant lines that must accumulate (and outnumber live entries) before a rebuild.
    package static let rebuildThreshold = 2000
    static let maximumKeyLength = 120

    /// The largest inline limit a packed journal's header may record: a record is read whole
    /// into memory. A header above it is refused (see ``DiskLRUCache/Storage/maximumInlineLimit``).
    static let maximumInlineLimit = 1 << 20

    /// The first line of a packed-storage journal.
    static let packedMagic = "swiftycache.packed"
    /// The first line of a packed-storage journal that may hold `BATCH` lines: releases before
    /// batches refuse it (`notACacheDirectory`) rather than read a batch as separate lines. A
    /// journal takes it when its first batch is written, and keeps it.
    static let packedBatchMagic = "swiftycache.packed2"
    /// The first line of a packed-storage journal whose segments are its log: every record
    /// after the journal's last `TAIL` line carries a prefix (``LogPrefix``) that lets an open
    /// after a crash apply a commit whose journal line never reached the disk, so a durable
    /// commit syncs its segment alone. It may hold `BATCH` lines too. Releases before it refuse
    /// it (`notACacheDirectory`): its magic is neither of theirs, nor one bit from them.
    static let packedLogMagic = "swiftycache.packed-log"

    /// The most bytes a `BATCH` line may take: the parser reads a line whole, so this bounds
    /// the memory a journal line can cost. A batch whose line would be longer is refused.
    static let maximumBatchLineLength = 32 << 20

    /// Which storage a journal describes: its header and the shape of its `CLEAN` lines.
    package enum Format: Hashable, Sendable {
        /// The Java `DiskLruCache` journal: one file per slot.
        case files
        /// Packed storage: records in segment files; slots above `inlineLimit` bytes are files.
        case packed(inlineLimit: Int)

        /// Whether `CLEAN` lines carry the record's location, and `MOVE` lines exist.
        var storesLocations: Bool {
            if case .packed = self { return true }
            return false
        }

        var magic: String { storesLocations ? packedMagic : Journal.magic }

        /// The storage's name in messages: `files` or `packed`.
        var name: String { storesLocations ? "packed" : "files" }

        /// The header lines, without their line ends; `marksBatches` gives a packed journal
        /// the magic of one that may hold `BATCH` lines (``packedBatchMagic``), `logsRecords`
        /// the magic of one whose segments are its log (``packedLogMagic``, which may hold
        /// `BATCH` lines too).
        func headerLines(appVersion: Int, valueCount: Int, marksBatches: Bool = false, logsRecords: Bool = false)
            -> [String]
        {
            switch self {
            case .files: [Journal.magic, version, String(appVersion), String(valueCount), ""]
            case .packed(let inlineLimit):
                [
                    logsRecords ? packedLogMagic : marksBatches ? packedBatchMagic : packedMagic, version,
                    String(appVersion), String(valueCount), String(inlineLimit), "",
                ]
            }
        }
    }

    static func header(
        appVersion: Int, valueCount: Int, format: Format = .files, marksBatches: Bool = false, logsRecords: Bool = false
    ) -> String {
        format.headerLines(
            appVersion: appVersion, valueCount: valueCount, marksBatches: marksBatches, logsRecords: logsRecords
        ).map { $0 + "\n" }.joined()
    }

    /// Whether `key` matches `[a-z0-9_-]{1,120}`, the keys the API accepts. The journal may
    /// hold wider keys, written by the Java library (see ``JournalParser``).
    static func isValidKey(_ key: String) -> Bool {
        return key.withUTF8Bytes { bytes in
            bytes.count > 0 && bytes.count <= maximumKeyLength && areKeyBytes(bytes)
        }
    }

    /// Whether `key` may be read or removed: a key the API writes, or a wider one the Java
    /// cache wrote and the journal replays (see ``CacheFileName/isReplayableKey(_:)``). Either
    /// way `key.N` names a file inside the cache directory.
    static func isReadableKey(_ key: String) -> Bool {
        if isValidKey(key) { return true }
        return key.withUTF8Bytes { bytes in
            bytes.count <= JournalParser.keyAllowance && CacheFileName.isReplayableKey(bytes[...])
        }
    }

    /// Whether every byte is one of `a`–`z`, `0`–`9`, `_` and `-`: eight bytes at a time, then
    /// byte by byte (``isKeyByte(_:)``).
    ///
    /// - Complexity: O(n), about three instructions per byte.
    static func areKeyBytes(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        var index = 0
        if let base = UnsafeRawPointer(bytes.baseAddress) {
            while bytes.count - index >= 8 {
                let word = UInt64(littleEndian: base.loadUnaligned(fromByteOffset: index, as: UInt64.self))
                guard areKeyBytes(word) else { return false }
                index += 8
            }
        }
        while index < bytes.count {
            guard isKeyByte(bytes[index]) else { return false }
            index += 1
        }
        return true
    }

    /// Whether all eight bytes of `word` are key bytes. Each range test adds to bytes below
    /// 0x80 (checked first), so no byte carries into the next, and sets the byte's high bit
    /// exactly when the byte is in the range.
    @inline(__always)
    static func areKeyBytes(_ word: UInt64) -> Bool {
        let ones: UInt64 = 0x0101_0101_0101_0101
        let highs = ones &* 0x80
        guard word & highs == 0 else { return false }
        /// High bit of each byte of `word` in `low...high` (both below 0x80).
        func inRange(_ low: UInt64, _ high: UInt64) -> UInt64 {
            (word &+ ones &* (0x80 - low)) & ~(word &+ ones &* (0x7F - high)) & highs
        }
        return inRange(0x61, 0x7A) | inRange(0x30, 0x39) | inRange(0x2D, 0x2D) | inRange(0x5F, 0x5F) == highs
    }

    /// Whether `byte` is one of `a`–`z`, `0`–`9`, `_` and `-`: one bit test in a 128-bit mask,
    /// no branch per range.
    @inline(__always)
    static func isKeyByte(_ byte: UInt8) -> Bool {
        // Bit `b` of the pair: `-` (0x2D) and `0`–`9` (0x30…) below 64; `_` (0x5F) and `a`–`z`
        // (0x61…) above.
        let below64: UInt64 = 1 << 0x2D | 0x3FF << 0x30
        let above64: UInt64 = 1 << (0x5F - 64) | 0x3FF_FFFF << (0x61 - 64)
        let mask = byte < 64 ? below64 : above64
        return byte < 128 && (mask >> (UInt64(byte) & 63)) & 1 != 0
    }

    package enum Operation: Equatable {
        /// A commit; `location` is written only in packed journals.
        case clean(lengths: SlotLengths, location: ValueLocation = .none)
        case dirty
        case remove
        case read
        /// Packed journals: compaction moved the entry's record.
        case move(ValueLocation)
        /// Journals under ``packedLogMagic``: every record before this position in the
        /// segments is accounted for by the lines before this one; from it on, the segments
        /// are read at an open after a crash (``LogPrefix``). The line's key is the session's
        /// identity, sixteen hexadecimal digits, which seeds the prefixes' checks.
        case tail(ValueLocation)
    }

    /// Why a journal could not be replayed. The cache answers by emptying its directory of its
    /// own files.
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

    /// Parses a whole journal written for `appVersion` and `valueCount` (see ``JournalParser``,
    /// which the cache uses to parse a file in bounded memory).
    ///
    /// - Throws: ``Corruption`` for a header that does not match, a malformed line, or a file
    ///   that is not a journal at all.
    /// - Complexity: O(n) in the file's size.
    package static func parse(
        _ bytes: [UInt8], appVersion: Int, valueCount: Int, format: Format = .files
    ) throws(Corruption) -> Contents {
        var records: [(key: String, operation: Operation)] = []
        var parser = JournalParser(appVersion: appVersion, valueCount: valueCount, format: format)
        bytes.withUnsafeBytes { buffer in parser.consume(buffer) { records.append(($0, $1)) } }
        let summary = parser.finish()
        if summary.firstLine == .foreign { throw Corruption(description: "not a DiskLruCache journal") }
        if let corruption = summary.corruption { throw corruption }
        if let damaged = summary.damagedLines.first {
            throw Corruption(
                description: "a journal line fails its check: \(String(decoding: damaged.prefix(200), as: UTF8.self))")
        }
        return Contents(records: records, hasUnterminatedLine: summary.hasUnterminatedLine)
    }

    /// Appends the journal line for `operation` on `key`, newline included, to `buffer`.
    ///
    /// - Complexity: O(line length), with bulk copies: it runs for every read and commit, and
    ///   for every entry when the journal is rebuilt.
    package static func appendLine(
        _ operation: Operation, key: String, format: Format = .files, to buffer: inout [UInt8]
    ) {
        key.withUTF8Bytes { appendLine(operation, key: $0, format: format, to: &buffer) }
    }

    /// ``appendLine(_:key:format:to:)`` for a key given as its bytes (the index's, in place).
    /// The line is composed in room on the stack (``JournalLineWriter``) and appended with one
    /// copy.
    static func appendLine(
        _ operation: Operation, key: UnsafeBufferPointer<UInt8>, tag: UInt32? = nil, format: Format = .files,
        to buffer: inout [UInt8]
    ) {
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: lineBound(of: operation, keyCount: key.count)) {
            room in
            var line = JournalLineWriter(room)
            switch operation {
            case .clean(let lengths, let location):
                line.write("CLEAN ")
                line.write(key)
                for length in lengths {
                    line.write(UInt8(ascii: " "))
                    line.writeDecimal(length)
                }
                if format.storesLocations { writeLocation(location, to: &line) }
            case .dirty:
                line.write("DIRTY ")
                line.write(key)
            case .remove:
                line.write("REMOVE ")
                line.write(key)
            case .read:
                line.write("READ ")
                line.write(key)
            case .move(let location):
                line.write("MOVE ")
                line.write(key)
                writeLocation(location, to: &line)
            case .tail(let location):
                line.write("TAIL ")
                line.write(key)
                writeLocation(location, to: &line)
            }
            // Packed journals (a format of our own) check every line that changes an entry;
            // Java's has no room for it. A READ line only orders entries: it goes unchecked,
            // and costs a read no hashing.
            if format.storesLocations && operation != .read {
                JournalLineCheck.write(key: key, tag: tag, to: &line)
            }
            line.write(UInt8(ascii: "\n"))
            // Room from `lineBound` always holds the line; were it short, no line is better
            // than a cut one (the entry is then missing from the journal, as after a crash).
            if !line.overflowed { buffer.append(contentsOf: line.written) }
        }
    }

    /// The most bytes the line of `operation` on a key of `keyCount` bytes can take: the
    /// longest verb and a space, the key, every number (21 bytes each at most, with its
    /// space), the check and the newline.
    static func lineBound(of operation: Operation, keyCount: Int) -> Int {
        let numbers: Int
        switch operation {
        case .clean(let lengths, _): numbers = lengths.count + 2
        case .move, .tail: numbers = 2
        case .dirty, .remove, .read: numbers = 0
        }
        return 8 + keyCount + numbers * 21 + JournalLineCheck.length + 1
    }

    /// One member line of a `BATCH` line: a `CLEAN` or a `REMOVE`.
    struct Member {
        var operation: Operation
        var key: String
        /// The key's tag (``JournalLineCheck/tag(of:)-(String)``) when known, `nil` to compute it.
        var tag: UInt32?
    }

    /// The verb of a batch's line.
    static let batchVerb = Array("BATCH".utf8)

    /// Appends a packed journal's `BATCH` line, newline included: `BATCH`, then each member's
    /// line (a `CLEAN` or a `REMOVE`, with its own check) after a tab, then the check of the
    /// whole line. Replayed all or nothing: a line torn by a crash or damaged is not applied
    /// (``JournalParser``), so a batch is never half there.
    ///
    ///     BATCH\tCLEAN k1 3 2 1 16 ~…\tREMOVE k2 ~… ~…
    ///
    /// - Complexity: O(line length).
    static func appendBatchLine(_ members: [Member], format: Format, to buffer: inout [UInt8]) {
        let start = buffer.count
        buffer.append(contentsOf: batchVerb)
        for member in members {
            buffer.append(UInt8(ascii: "\t"))
            var key = member.key
            key.withUTF8 { appendLine(member.operation, key: $0, tag: member.tag, format: format, to: &buffer) }
            buffer.removeLast()  // the member's newline
        }
        var firstKey = members.first?.key ?? ""
        firstKey.withUTF8 { JournalLineCheck.append(key: $0, lineStart: start, to: &buffer) }
        buffer.append(UInt8(ascii: "\n"))
    }

    /// An upper bound of the bytes of a `BATCH` line naming `keyBytes` bytes of keys in
    /// `members` members of `valueCount` slots: checked before a batch is written.
    static func batchLineBound(members: Int, keyBytes: Int, valueCount: Int) -> Int {
        // Per member: a tab, the verb and a space, the lengths and location (21 bytes each at
        // most), the check; then the verb and the line's check.
        let perMember = 1 + 7 + (valueCount + 2) * 21 + JournalLineCheck.length
        let (product, overflow) = members.multipliedReportingOverflow(by: perMember)
        guard !overflow else { return Int.max }
        return product.addingReportingOverflow(keyBytes + batchVerb.count + JournalLineCheck.length + 1).partialValue
    }

    /// ` segment offset`: where a record is, in a packed journal's line.
    private static func writeLocation(_ location: ValueLocation, to line: inout JournalLineWriter) {
        line.write(UInt8(ascii: " "))
        line.writeDecimal(Int(location.segment))
        line.write(UInt8(ascii: " "))
        line.writeDecimal(Int(location.offset))
    }
}
