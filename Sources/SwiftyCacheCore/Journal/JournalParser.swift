/// Parses a journal fed in chunks, in memory bounded by the longest line it accepts, with the
/// Java `DiskLruCache`'s rules, so that every journal Java replays is replayed here with the
/// same entries:
///
/// - lines end with `\\n`, and a `\\r` before it is dropped (CRLF journals);
/// - `CLEAN key len…` tolerates spaces after the last length (Java splits on single spaces and
///   drops trailing empty fields); lengths may carry a `+` sign and go up to `Int64.max`;
/// - keys read back may be any printable ASCII without a space, wider than the
///   `[a-z0-9_-]{1,120}` the API writes, *except* what could name a path outside the directory:
///   a `/`, a NUL or another control byte, `.` or `..` make the journal corrupt, as does a
///   negative length (Java would accept one and corrupt its size);
/// - an unterminated last line (a torn append) is ignored and reported.
///
/// The first line tells whether the file is a journal at all: the magic, or damage a crash can
/// leave (an empty file, NUL bytes, a torn header), or something else entirely
/// (``FirstLine/foreign``), which the cache refuses to touch. After a corrupt line the parser
/// keeps scanning, only to collect the keys the rest of the file names: a wipe deletes the
/// files of those keys and nothing else.
struct JournalParser {
    /// What the first line says about the file.
    enum FirstLine: Equatable {
        /// Not seen yet (no newline and no end of input so far).
        case unknown
        /// The DiskLruCache magic.
        case magic
        /// The magic of a packed-storage journal (``Journal/packedMagic``).
        case packedMagic
        /// Empty, NUL bytes, or a torn prefix of the header: a journal a crash damaged.
        case damaged
        /// Anything else: this file is not a DiskLruCache journal.
        case foreign
    }

    /// What the parse saw besides the records.
    struct Summary {
        var firstLine: FirstLine
        /// The first problem met; records passed before it must be discarded.
        var corruption: Journal.Corruption?
        /// How many body records were passed on.
        var recordCount: Int
        /// Whether the input ended with a line that has no newline.
        var hasUnterminatedLine: Bool
        /// The bytes of that unterminated line (0 when there is none).
        var unterminatedByteCount: Int
        /// The keys named by lines after the corruption (for deleting only the cache's files).
        var keysAfterCorruption: Set<String>
        /// Packed journals: lines whose check failed, skipped; the entries they may name must be
        /// dropped (see ``JournalLineCheck``).
        var damagedLines: [[UInt8]] = []
        /// How many of the records came from `BLOCK` lines (``JournalBlock``).
        var blockRecordCount = 0
        /// How many lines were a torn append joined to a whole one (``joinedLineStart(in:)``):
        /// the whole one replayed, the torn start skipped.
        var joinedLineCount = 0
    }

    let valueCount: Int
    let format: Journal.Format
    /// The first line this parser replays: the other format's magic is a journal it refuses.
    private let expectedFirstLine: FirstLine
    private let expectedHeader: [[UInt8]]
    private let maximumLineLength: Int
    private var pending: [UInt8] = []
    private var lineNumber = 0
    private var recordCount = 0
    private var blockRecordCount = 0
    private var joinedLineCount = 0
    /// The entries of the last `BLOCK` line, in buffers kept from line to line.
    private var block = JournalBlock.Decoded()
    private var firstLine = FirstLine.unknown
    private var corruption: Journal.Corruption?
    private var keysAfterCorruption: Set<String> = []
    private var bytesAfterCorruption: Int64 = 0
    private var damagedLines: [[UInt8]] = []
    private var damagedByteCount = 0
    /// Whether a line with a check was seen: from then on, a line without one is damage.
    private var seenCheckedLine = false
    /// Past this many damaged lines (or bytes of them) the journal is corrupt as a whole.
    static let maximumDamagedLines = 1_024
    static let maximumDamagedBytes = 1 << 20
    /// The longest line past which a journal is corrupt whatever it holds: a key and a length of
    /// up to 20 characters per slot fit with room to spare.
    static let keyAllowance = 64 << 10

    init(appVersion: Int, valueCount: Int, format: Journal.Format = .files) {
        self.valueCount = valueCount
        self.format = format
        expectedFirstLine = format.storesLocations ? .packedMagic : .magic
        expectedHeader = format.headerLines(appVersion: appVersion, valueCount: valueCount).map { Array($0.utf8) }
        // A packed journal's BATCH line holds a whole batch.
        maximumLineLength =
            format.storesLocations
            ? Journal.maximumBatchLineLength : Self.keyAllowance + (min(max(valueCount, 0), 1 << 20) + 2) * 21
    }

    /// Parses the complete lines of `bytes` (a partial last line waits for the next chunk),
    /// passing each body record to `body` as it is read.
    ///
    /// - Complexity: O(bytes); lines are found with `memchr` (``ByteSearch``).
    mutating func consume(_ bytes: UnsafeRawBufferPointer, _ body: (String, Journal.Operation) -> Void) {
        consume(bytes, keyBytes: { key, operation in body(String(decoding: key, as: UTF8.self), operation) })
    }

    /// ``consume(_:_:)`` with each key passed as its bytes in the line, valid during the call:
    /// no `String` per line, for the replay that looks it up in the index.
    /// A `BLOCK` line's entries reach `body` one by one, as `CLEAN` records.
    mutating func consume(
        _ bytes: UnsafeRawBufferPointer, keyBytes body: (UnsafeBufferPointer<UInt8>, Journal.Operation) -> Void
    ) {
        consume(
            bytes, keyBytes: body,
            blocks: { block in
                block.forEachEntry { key, lengths, location in body(key, .clean(lengths: lengths, location: location)) }
            })
    }

    /// ``consume(_:keyBytes:)`` with each `BLOCK` line's entries passed whole to `blocks` (a
    /// replay loads them as a saved index's), in order with the records `body` receives.
    mutating func consume(
        _ bytes: UnsafeRawBufferPointer, keyBytes body: (UnsafeBufferPointer<UInt8>, Journal.Operation) -> Void,
        blocks: (borrowing JournalBlock.Decoded) -> Void
    ) {
        guard bytes.count > 0 else { return }
        if corruption != nil { bytesAfterCorruption += Int64(bytes.count) }
        var start = 0
        while start < bytes.count {
            guard let end = ByteSearch.firstIndex(of: UInt8(ascii: "\n"), in: bytes, from: start) else {
                appendPending(UnsafeRawBufferPointer(rebasing: bytes[start...]))
                return
            }
            let piece = UnsafeRawBufferPointer(rebasing: bytes[start..<end])
            if pending.isEmpty {
                handleLine(piece.assumingMemoryBound(to: UInt8.self), body, blocks)
            } else {
                appendPending(piece)
                let line = pending
                pending.removeAll(keepingCapacity: true)
                line.withUnsafeBufferPointer { handleLine($0, body, blocks) }
            }
            start = end + 1
        }
    }

    /// Whether a corrupt line was met: what follows it is not passed on.
    var hasCorruption: Bool { corruption != nil }

    /// Whether the first line showed that the input is not a journal at all, or one of the
    /// other storage format.
    var isForeign: Bool { firstLine != .unknown && firstLine != .damaged && firstLine != expectedFirstLine }

    /// Whether more input can change the result: not after a foreign first line, nor once the
    /// scan for keys after a corruption has covered ``keyScanLimit`` bytes.
    var wantsMoreInput: Bool { !isForeign && !(corruption != nil && bytesAfterCorruption > Self.keyScanLimit) }

    /// How far past a corruption the parser reads to learn which keys the journal names, and
    /// how many it remembers: a bound on the time and memory a hostile journal can take. Files
    /// of keys past it are left alone and reported as unknown.
    static let keyScanLimit: Int64 = 64 << 20
    static let maximumKeysAfterCorruption = 1 << 16

    /// Ends the input and returns what was seen.
    mutating func finish() -> Summary {
        if firstLine == .unknown { classifyFirstLine(pending[...], isComplete: false) }
        if corruption == nil && firstLine == expectedFirstLine && lineNumber < expectedHeader.count {
            corruption = Journal.Corruption(description: "the journal header is incomplete")
        }
        if firstLine == .damaged && corruption == nil {
            corruption = Journal.Corruption(description: "the journal is empty or damaged")
        }
        return Summary(
            firstLine: firstLine, corruption: corruption, recordCount: recordCount,
            hasUnterminatedLine: !pending.isEmpty, unterminatedByteCount: pending.count,
            keysAfterCorruption: keysAfterCorruption, damagedLines: corruption == nil ? damagedLines : [],
            blockRecordCount: blockRecordCount, joinedLineCount: joinedLineCount)
    }

    private mutating func appendPending(_ bytes: UnsafeRawBufferPointer) {
        guard corruption == nil || pending.count < maximumLineLength else { return }
        if pending.count + bytes.count > maximumLineLength {
            // Keep only what decides the verdict; the line is corrupt whatever follows.
            pending.append(contentsOf: bytes.prefix(max(0, maximumLineLength + 1 - pending.count)))
        } else {
            pending.append(contentsOf: bytes)
        }
    }

    private mutating func handleLine(
        _ raw: UnsafeBufferPointer<UInt8>, _ body: (UnsafeBufferPointer<UInt8>, Journal.Operation) -> Void,
        _ blocks: (borrowing JournalBlock.Decoded) -> Void
    ) {
        var line = raw[...]
        if line.last == UInt8(ascii: "\r") { line = line.dropLast() }
        if firstLine == .unknown {
            // The first line is the magic (the header's first line, now checked) or the verdict.
            classifyFirstLine(line, isComplete: true)
            return
        }
        guard firstLine == expectedFirstLine else { return }
        if corruption != nil {
            collectKey(from: line)
            return
        }
        if lineNumber < expectedHeader.count {
            let expected = expectedHeader[lineNumber]
            lineNumber += 1
            guard line.elementsEqual(expected) else {
                corruption = Journal.Corruption(
                    description:
                        "unexpected journal header line \(lineNumber): expected \(String(reflecting: String(decoding: expected, as: UTF8.self))), found \(Self.quoted(line))"
                )
                return
            }
            return
        }
        guard line.count <= maximumLineLength else {
            corruption = Journal.Corruption(description: "a journal line is longer than \(maximumLineLength) bytes")
            return
        }
        if format.storesLocations && handleCheckedLine(line, body, blocks) { return }
        switch Self.parseBodyLine(line, valueCount: valueCount, storesLocations: format.storesLocations) {
        case .success(let record):
            body(UnsafeBufferPointer(rebasing: record.key), record.operation)
            recordCount += 1
        case .failure(let problem):
            corruption = problem
            collectKey(from: line)
        }
    }

    /// A line of a packed journal with its check (``JournalLineCheck``): passed on when the
    /// check holds, kept as damage when it fails, or when it has none after a line that had
    /// one. Returns `false` for a line without a check before any had one (a journal an
    /// earlier release wrote), which the old rules read.
    private mutating func handleCheckedLine(
        _ line: Slice<UnsafeBufferPointer<UInt8>>, _ body: (UnsafeBufferPointer<UInt8>, Journal.Operation) -> Void,
        _ blocks: (borrowing JournalBlock.Decoded) -> Void
    ) -> Bool {
        guard let checked = JournalLineCheck.split(line) else {
            // Blocks are always checked: one without its check is damaged, never an old line.
            if line.starts(with: JournalBlock.verb) {
                noteDamaged(line)
                return true
            }
            guard seenCheckedLine else { return false }
            // READ lines carry no check: one damaged into another READ only reorders entries.
            if case .success(let record) = Self.parseBodyLine(line, valueCount: valueCount, storesLocations: true),
                record.operation == .read
            {
                body(UnsafeBufferPointer(rebasing: record.key), record.operation)
                recordCount += 1
            } else {
                noteDamaged(line)
            }
            return true
        }
        seenCheckedLine = true
        if checked.body.starts(with: Journal.batchVerb) {
            guard checked.isIntact, handleBatch(checked.body.dropFirst(Journal.batchVerb.count), body) else {
                handleFailedLine(line, body, blocks)
                return true
            }
            return true
        }
        if checked.body.starts(with: JournalBlock.verb) {
            let payload = checked.body.dropFirst(JournalBlock.verb.count)
            guard checked.isIntact, block.decode(payload, valueCount: valueCount) else {
                handleFailedLine(line, body, blocks)
                return true
            }
            blocks(block)
            recordCount += block.count
            blockRecordCount += block.count
            return true
        }
        guard checked.isIntact,
            case .success(let record) = Self.parseBodyLine(checked.body, valueCount: valueCount, storesLocations: true)
        else {
            handleFailedLine(line, body, blocks)
            return true
        }
        body(UnsafeBufferPointer(rebasing: record.key), record.operation)
        recordCount += 1
        return true
    }

    /// A `BATCH` line's members (after its verb): passed on all or none. Each member is a
    /// checked `CLEAN` or `REMOVE` line after a tab. Returns `false`, passing nothing on, when
    /// any member fails.
    ///
    /// - Complexity: O(line length); the members' keys are slices of the line.
    private mutating func handleBatch(
        _ members: Slice<UnsafeBufferPointer<UInt8>>, _ body: (UnsafeBufferPointer<UInt8>, Journal.Operation) -> Void
    ) -> Bool {
        let tab = UInt8(ascii: "\t")
        guard members.first == tab else { return false }
        var records: [(key: Slice<UnsafeBufferPointer<UInt8>>, operation: Journal.Operation)] = []
        var start = members.startIndex + 1
        while start <= members.endIndex {
            let end = members[start...].firstIndex(of: tab) ?? members.endIndex
            guard let checked = JournalLineCheck.split(members[start..<end]), checked.isIntact,
                case .success(let record) = Self.parseBodyLine(
                    checked.body, valueCount: valueCount, storesLocations: true)
            else { return false }
            switch record.operation {
            case .clean, .remove: records.append(record)
            default: return false
            }
            start = end + 1
        }
        for record in records { body(UnsafeBufferPointer(rebasing: record.key), record.operation) }
        recordCount += records.count
        return true
    }

    /// A checked line that failed: the whole line a torn append was joined to, when it ends
    /// with one (``joinedLineStart(in:)``), replayed; otherwise damage.
    private mutating func handleFailedLine(
        _ line: Slice<UnsafeBufferPointer<UInt8>>, _ body: (UnsafeBufferPointer<UInt8>, Journal.Operation) -> Void,
        _ blocks: (borrowing JournalBlock.Decoded) -> Void
    ) {
        guard let start = Self.joinedLineStart(in: line) else {
            noteDamaged(line)
            return
        }
        joinedLineCount += 1
        _ = handleCheckedLine(line[start...], body, blocks)
    }

    /// Keeps a damaged line for the replay to drop what it names; past the bounds, the journal
    /// is corrupt as a whole.
    private mutating func noteDamaged(_ line: Slice<UnsafeBufferPointer<UInt8>>) {
        damagedByteCount += line.count
        guard damagedLines.count < Self.maximumDamagedLines, damagedByteCount <= Self.maximumDamagedBytes else {
            corruption = Journal.Corruption(description: "more than \(damagedLines.count) damaged journal lines")
            collectKey(from: line)
            return
        }
        damagedLines.append(Array(line))
    }

    private mutating func classifyFirstLine(_ line: ArraySlice<UInt8>, isComplete: Bool) {
        line.withUnsafeBufferPointer { classifyFirstLine($0[...], isComplete: isComplete) }
    }

    private mutating func classifyFirstLine(_ line: Slice<UnsafeBufferPointer<UInt8>>, isComplete: Bool) {
        firstLine = Self.classify(firstLine: line, isComplete: isComplete)
        if firstLine == expectedFirstLine { lineNumber = 1 }
        // A packed magic with a flipped bit: kept as a damaged line (it names no entry), so
        // that the journal is rewritten whole.
        if firstLine == .packedMagic && !line.elementsEqual(Journal.packedMagic.utf8)
            && !line.elementsEqual(Journal.packedBatchMagic.utf8) && !line.elementsEqual(Journal.packedLogMagic.utf8)
        {
            noteDamaged(line)
        }
    }

    /// After a corruption: remembers the key a line names, if it could be one of the cache's.
    private mutating func collectKey(from line: Slice<UnsafeBufferPointer<UInt8>>) {
        // A block's keys are binary: none can be read out of a line that did not decode.
        guard !line.starts(with: JournalBlock.verb) else { return }
        guard let space = line.firstIndex(of: UInt8(ascii: " ")) else { return }
        let rest = line[(space + 1)...]
        let key = rest[..<(rest.firstIndex(of: UInt8(ascii: " ")) ?? rest.endIndex)]
        guard keysAfterCorruption.count < Self.maximumKeysAfterCorruption, CacheFileName.isReplayableKey(key) else {
            return
        }
        keysAfterCorruption.insert(String(decoding: key, as: UTF8.self))
    }

}
