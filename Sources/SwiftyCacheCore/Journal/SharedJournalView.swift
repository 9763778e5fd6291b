/// What a cache that shares its directory with other writers (``DiskLRUCache/Sharing``) knows
/// of the journal: which file it replayed and up to where, so that it reads only what the
/// others appended since, and notices a journal another cache rebuilt.
///
/// Only whole lines are read: a line still being written (or one a killed writer tore, which
/// the next holder of the operation lock cuts off) is left for later, so that nothing is ever
/// parsed from a half line.
///
/// - Complexity: each catch-up reads only the bytes appended since the last one; the check
///   that nothing was appended is one `fstat`.
struct SharedJournalView {
    let fd: Int32
    let identity: FileIdentity
    /// Up to where the journal's lines were applied: always the end of a whole line.
    private(set) var applied: Int64
    /// The lines after ``applied`` (header already consumed).
    private var parser: JournalParser

    init(fd: Int32, identity: FileIdentity, applied: Int64, parser: JournalParser) {
        self.fd = fd
        self.identity = identity
        self.applied = applied
        self.parser = parser
    }

    /// A parser ready for the body lines of a journal of `format`: the header it would have
    /// checked is fed to it first.
    static func bodyParser(appVersion: Int, valueCount: Int, format: Journal.Format) -> JournalParser {
        var parser = JournalParser(appVersion: appVersion, valueCount: valueCount, format: format)
        let header = format.headerLines(appVersion: appVersion, valueCount: valueCount).joined(separator: "\n") + "\n"
        Array(header.utf8).withUnsafeBytes { bytes in
            parser.consume(bytes, keyBytes: { (_: UnsafeBufferPointer<UInt8>, _: Journal.Operation) in })
        }
        return parser
    }

    /// What a look at the journal found.
    enum Look {
        /// Nothing appended since ``applied``, and the file is still the journal.
        case unchanged
        /// Lines were appended: catch up.
        case appended
        /// The file is no longer the directory's journal (another cache rebuilt it): replay
        /// the new one.
        case replaced
    }

    /// The cheap check every read makes: the file's size and link count (a rebuilt journal's
    /// old file is unlinked by the rebuild before its operation returns).
    ///
    /// - Complexity: one `fstat`.
    func look(fileSystem: any FileSystem) -> Look {
        guard let status = try? fileSystem.status(of: fd), status.linkCount > 0 else { return .replaced }
        return status.size == applied ? .unchanged : .appended
    }

    /// Reads the whole lines appended since ``applied`` (up to `limit`, where the caller knows
    /// the journal's lines end) and passes each record to `body`, in order. Returns the offset
    /// of bytes left after the last whole line (a line in progress, or torn), equal to the
    /// file's end (or `limit`) when there are none; `nil` when the lines could not be read or
    /// the parser found them corrupt (the caller replays the journal).
    ///
    /// - Complexity: O(bytes appended), read 16 KiB at a time; one `pread` for a few lines.
    mutating func catchUp(
        fileSystem: any FileSystem, upTo limit: Int64 = .max,
        _ body: (UnsafeBufferPointer<UInt8>, Journal.Operation) -> Void
    ) -> Int64? {
        var result: Int64?
        // Usually a few lines: a small buffer on the stack of the call, a chunk past it.
        withUnsafeTemporaryAllocation(byteCount: 16 << 10, alignment: 16) { chunk in
            result = catchUp(into: chunk, upTo: limit, fileSystem: fileSystem, body)
        }
        return result
    }

    private mutating func catchUp(
        into chunk: UnsafeMutableRawBufferPointer, upTo limit: Int64, fileSystem: any FileSystem,
        _ body: (UnsafeBufferPointer<UInt8>, Journal.Operation) -> Void
    ) -> Int64? {
        var offset = applied
        while offset < limit {
            let wanted = Int(min(Int64(chunk.count), limit - offset))
            let window = UnsafeMutableRawBufferPointer(rebasing: chunk[0..<wanted])
            guard let count = try? fileSystem.read(fd, into: window, at: offset) else { return nil }
            if count == 0 { return offset }
            let bytes = UnsafeRawBufferPointer(rebasing: chunk[0..<count])
            // Only through the last newline of what was read: a line is parsed once whole.
            guard let lastNewline = bytes.lastIndex(of: UInt8(ascii: "\n")) else {
                // A line longer than the chunk, or one in progress: read on from the same place
                // only if more than a chunk is there (a line may be a batch of megabytes).
                if count < chunk.count { return offset }
                guard let next = readLongLine(from: offset, fileSystem: fileSystem, body) else { return nil }
                if next == offset { return offset }
                offset = next
                continue
            }
            parser.consume(UnsafeRawBufferPointer(rebasing: bytes[0...lastNewline]), keyBytes: body)
            guard !parser.hasCorruption else { return nil }
            offset += Int64(lastNewline + 1)
            applied = offset
            // A short read reached the end of the file as it was: nothing more to read now.
            if count < wanted { return offset }
        }
        return offset
    }

    /// A line longer than one chunk: read whole (up to the journal's longest line), then parsed.
    private mutating func readLongLine(
        from start: Int64, fileSystem: any FileSystem, _ body: (UnsafeBufferPointer<UInt8>, Journal.Operation) -> Void
    ) -> Int64? {
        var line: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 64 << 10)
        var offset = start
        while line.count <= Journal.maximumBatchLineLength {
            let count = buffer.withUnsafeMutableBytes { (try? fileSystem.read(fd, into: $0, at: offset)) ?? -1 }
            if count < 0 { return nil }
            if count == 0 { return start }
            if let newline = buffer[0..<count].firstIndex(of: UInt8(ascii: "\n")) {
                line.append(contentsOf: buffer[0...newline])
                line.withUnsafeBytes { parser.consume($0, keyBytes: body) }
                guard !parser.hasCorruption else { return nil }
                applied = start + Int64(line.count)
                return applied
            }
            line.append(contentsOf: buffer[0..<count])
            offset += Int64(count)
        }
        return nil
    }

    /// Notes that this cache appended its own lines, up to `end`, under the operation lock
    /// after catching up: they are in its index already.
    mutating func noteOwnLines(upTo end: Int64) {
        applied = end
    }

    func close(fileSystem: any FileSystem) {
        try? fileSystem.close(fd)
    }
}
