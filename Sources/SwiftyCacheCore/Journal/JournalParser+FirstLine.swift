/// What a journal's first line says about the file: the magic of either format (a packed
/// magic one bit off counts, damage staying local in our own format), damage a crash can
/// leave, or something else entirely.
extension JournalParser {
    /// What a file's first line (without its line end) says: `isComplete` when a newline ended
    /// it, `false` when the file ended first.
    static func classify(firstLine line: Slice<UnsafeBufferPointer<UInt8>>, isComplete: Bool) -> FirstLine {
        let magic = Array(Journal.magic.utf8)
        let packedMagic = Array(Journal.packedMagic.utf8)
        let batchMagic = Array(Journal.packedBatchMagic.utf8)
        let logMagic = Array(Journal.packedLogMagic.utf8)
        var line = line
        if isComplete, line.last == UInt8(ascii: "\r") { line = line.dropLast() }
        if line.elementsEqual(magic) && isComplete { return .magic }
        if (line.elementsEqual(packedMagic) || line.elementsEqual(batchMagic) || line.elementsEqual(logMagic))
            && isComplete
        {
            return .packedMagic
        }
        // A packed journal's magic with one bit flipped (our format: damage stays local); the
        // Java magic stays exact, as Java reads it.
        for candidate in [packedMagic, batchMagic, logMagic]
        where isComplete && line.count == candidate.count
            && zip(line, candidate).reduce(0, { $0 + ($1.0 ^ $1.1).nonzeroBitCount }) == 1
        {
            return .packedMagic
        }
        if line.isEmpty && !isComplete { return .damaged }  // an empty file
        if line.first == 0 { return .damaged }  // zeros where the data should be, as a power loss leaves them
        // A header torn inside its first line.
        if !isComplete && (magic.starts(with: line) || batchMagic.starts(with: line) || logMagic.starts(with: line)) {
            return .damaged
        }
        return .foreign
    }

    /// What the first bytes of a file (`prefix`, all of it when `isWholeFile`) say about it.
    static func classify(prefix: [UInt8], isWholeFile: Bool) -> FirstLine {
        prefix.withUnsafeBufferPointer { buffer in
            if let newline = buffer.firstIndex(of: UInt8(ascii: "\n")) {
                return classify(firstLine: buffer[..<newline], isComplete: true)
            }
            if buffer.first == 0 { return .damaged }
            // No line end in the prefix: a first line longer than the magic is not the magic.
            guard isWholeFile || buffer.count <= max(Journal.magic.utf8.count, Journal.packedBatchMagic.utf8.count)
            else {
                return .foreign
            }
            return classify(firstLine: buffer[...], isComplete: false)
        }
    }
}
