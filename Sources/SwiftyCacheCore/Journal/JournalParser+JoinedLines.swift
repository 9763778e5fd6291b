/// Lines joined by a torn append. Caches that share a directory (``DiskLRUCache/Sharing``)
/// append to the journal at once; a writer killed in the middle of its `write` leaves the
/// start of its line, with no newline, and the next writer's whole line follows it. The pair
/// reads as one line whose check fails. Its end is the whole line, with its check: found, it is
/// replayed, and the torn start, an append that never finished (nothing was acknowledged by
/// it), is skipped, neither replayed nor taken for damage.
extension JournalParser {
    /// The verbs a checked line starts with, and a batch's.
    private static let lineStarts: [[UInt8]] = [
        Array("CLEAN ".utf8), Array("REMOVE ".utf8), Array("DIRTY ".utf8), Array("MOVE ".utf8),
        Array("TAIL ".utf8), Journal.batchVerb + [UInt8(ascii: "\t")],
    ]

    /// How many places in one line are tried: a torn start joined to a whole line offers two
    /// or three (the torn line's verb, the whole line's, a verb a key ends with); a line that
    /// offers more is damage, however long and however crafted.
    static let maximumJoinCandidates = 16

    /// Where the whole line a torn append was joined to starts in `line`, whose check failed:
    /// the first place after its start where a verb begins and, from there to the end, the
    /// line's check holds. `nil` when there is none (the line is damaged).
    ///
    /// Only a batch's line holds tabs (between its members), and a torn batch holds no other
    /// `BATCH` and tab than its first: a single line is looked for after the last tab, a batch
    /// wherever `BATCH` and a tab appear.
    ///
    /// - Complexity: O(line length × ``maximumJoinCandidates``): each candidate's check hashes
    ///   the rest of the line.
    static func joinedLineStart(in line: Slice<UnsafeBufferPointer<UInt8>>) -> Int? {
        guard line.count > JournalLineCheck.length + 1 else { return nil }
        let tab = UInt8(ascii: "\t")
        let checkStart = line.endIndex - JournalLineCheck.length
        let singleLineFrom = (line[line.startIndex..<checkStart].lastIndex(of: tab) ?? line.startIndex) + 1
        var tried = 0
        var position = line.startIndex + 1
        while position < checkStart {
            let byte = line[position]
            // The verbs' first letters: C, R, D, M, T, B.
            guard byte == 0x43 || byte == 0x52 || byte == 0x44 || byte == 0x4D || byte == 0x54 || byte == 0x42 else {
                position += 1
                continue
            }
            for verb in lineStarts where line[position...].starts(with: verb) {
                let isBatch = verb.last == tab
                guard isBatch || position >= singleLineFrom else { continue }
                tried += 1
                if tried > maximumJoinCandidates { return nil }
                if let checked = JournalLineCheck.split(line[position...]), checked.isIntact { return position }
            }
            position += 1
        }
        return nil
    }
}
