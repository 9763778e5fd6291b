/// The journal's header, read before the journal is replayed: which storage, `appVersion` and
/// `valueCount` a directory holds.
extension CacheDirectory {
    /// What a journal's header records.
    struct JournalHeader {
        var format: Journal.Format
        var appVersion: Int
        var valueCount: Int
        /// Whether the magic is the one of a packed journal that may hold `BATCH` lines.
        var marksBatches = false
        /// Whether the magic is the one of a packed journal whose segments are its log.
        var logsRecords = false
    }

    /// The storage format, `appVersion` and `valueCount` the journal's header records; `nil`
    /// when there is no journal or its header is damaged.
    ///
    /// - Throws: ``CacheError/Code/notACacheDirectory`` for a file that is not a journal.
    func journalHeader() throws(CacheError) -> JournalHeader? {
        if let status = try? fileSystem.status(atPath: journalPath), status.kind != .regular {
            throw CacheError.notACacheDirectory(path: journalPath, reason: "it is not a regular file")
        }
        guard let fd = try? fileSystem.open(journalPath, flags: OpenFlags.readOnly, mode: 0) else { return nil }
        defer { try? fileSystem.close(fd) }
        var buffer = [UInt8](repeating: 0, count: 4096)
        let count = buffer.withUnsafeMutableBytes { (try? fileSystem.read(fd, into: $0, at: 0)) ?? 0 }
        let prefix = Array(buffer[0..<count])
        let firstLine = JournalParser.classify(prefix: prefix, isWholeFile: count < buffer.count)
        switch firstLine {
        case .foreign:
            throw CacheError.notACacheDirectory(path: journalPath, reason: "its first line is not \(Journal.magic)")
        case .damaged, .unknown:
            return nil
        case .magic, .packedMagic:
            let lines = prefix.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false).map {
                String(decoding: $0.last == UInt8(ascii: "\r") ? $0.dropLast() : $0, as: UTF8.self)
            }
            guard lines.count > 3, let appVersion = Int(lines[2]), let valueCount = Int(lines[3]), valueCount >= 1
            else { return nil }
            guard firstLine == .packedMagic else {
                return JournalHeader(format: .files, appVersion: appVersion, valueCount: valueCount)
            }
            guard lines.count > 4, let inlineLimit = Int(lines[4]), inlineLimit >= 0 else { return nil }
            guard inlineLimit <= Journal.maximumInlineLimit else {
                // Reads allocate a record's size: a limit past the cap is refused, never wiped.
                throw CacheError.notACacheDirectory(
                    path: journalPath,
                    reason:
                        "its inline limit \(inlineLimit) is above \(Journal.maximumInlineLimit), the largest this release reads"
                )
            }
            return JournalHeader(
                format: .packed(inlineLimit: inlineLimit), appVersion: appVersion, valueCount: valueCount,
                marksBatches: lines[0].utf8.count != Journal.packedMagic.utf8.count,
                logsRecords: lines[0].utf8.count == Journal.packedLogMagic.utf8.count)
        }
    }
}
