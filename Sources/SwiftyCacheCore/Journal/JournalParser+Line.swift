/// One body line of a journal, parsed with the Java library's rules: the key, the verb and the
/// numbers that follow.
extension JournalParser {
    /// Parses one body line (without its line end), with Java's rules.
    ///
    /// - Complexity: O(line length), with no allocation (but, past two slots, the lengths
    ///   array): the key is a slice of the line.
    static func parseBodyLine(
        _ line: Slice<UnsafeBufferPointer<UInt8>>, valueCount: Int, storesLocations: Bool = false
    ) -> Result<(key: Slice<UnsafeBufferPointer<UInt8>>, operation: Journal.Operation), Journal.Corruption> {
        let space = UInt8(ascii: " ")
        // Built only for a line that is wrong: formatting it costs more than parsing a good one.
        func corrupt() -> Result<
            (key: Slice<UnsafeBufferPointer<UInt8>>, operation: Journal.Operation), Journal.Corruption
        > {
            .failure(Journal.Corruption(description: "unexpected journal line: \(quoted(line))"))
        }
        guard let firstSpace = line.firstIndex(of: space) else { return corrupt() }
        let verb = line[..<firstSpace]
        let rest = line[(firstSpace + 1)...]
        let secondSpace = rest.firstIndex(of: space)
        let keyBytes = rest[..<(secondSpace ?? rest.endIndex)]
        guard CacheFileName.isReplayableKey(keyBytes) else { return corrupt() }
        let key = keyBytes
        let verbWord = Self.verbWord(verb)
        guard let secondSpace else {
            if verbWord == Self.removeVerb { return .success((key, .remove)) }
            if verbWord == Self.dirtyVerb { return .success((key, .dirty)) }
            if verbWord == Self.readVerb { return .success((key, .read)) }
            return corrupt()
        }
        let isTail = storesLocations && verbWord == Self.tailVerb
        let isMove = storesLocations && (verbWord == Self.moveVerb || isTail)
        guard isMove || verbWord == Self.cleanVerb else { return corrupt() }
        // Packed journals: the segment and offset follow the lengths (a MOVE has only them).
        let fieldCount = (isMove ? 0 : valueCount) + (storesLocations ? 2 : 0)
        // Java: `line.substring(secondSpace + 1).split(" ")`, which drops trailing empty fields.
        var end = line.endIndex
        while end > secondSpace + 1 && line[end - 1] == space { end -= 1 }
        let numbers: LineNumbers
        let slotCount = isMove ? 0 : valueCount
        switch parseNumbers(line, from: secondSpace + 1, to: end, slotCount: slotCount, fieldCount: fieldCount) {
        case .success(let parsed): numbers = parsed
        case .failure(.malformed): return corrupt()
        case .failure(.overflow):
            return .failure(
                Journal.Corruption(
                    description: "the lengths of \(String(decoding: key, as: UTF8.self)) add up past Int.max"))
        }
        let (lengths, locationFields) = (numbers.lengths, numbers.location)
        guard storesLocations else { return .success((key, .clean(lengths: lengths))) }
        guard let segment = UInt32(exactly: locationFields.segment), let offset = Int64(exactly: locationFields.offset)
        else { return corrupt() }
        let location = ValueLocation(segment: segment, offset: offset)
        if isTail { return .success((key, .tail(location))) }
        if isMove { return .success((key, .move(location))) }
        return .success((key, .clean(lengths: lengths, location: location)))
    }

    /// A verb of up to seven bytes as one integer (its bytes, then its length in the top byte):
    /// five verbs compared as five integers, not byte by byte. Longer verbs are none of them.
    @inline(__always)
    private static func verbWord(_ verb: Slice<UnsafeBufferPointer<UInt8>>) -> UInt64 {
        guard verb.count < 8 else { return 0 }
        var word = UInt64(verb.count) << 56
        var shift: UInt64 = 0
        for byte in verb {
            word |= UInt64(byte) << shift
            shift &+= 8
        }
        return word
    }

    private static func verbWord(_ verb: StaticString) -> UInt64 {
        verb.withUTF8Buffer { verbWord($0[...]) }
    }

    private static let cleanVerb = verbWord("CLEAN")
    private static let removeVerb = verbWord("REMOVE")
    private static let dirtyVerb = verbWord("DIRTY")
    private static let readVerb = verbWord("READ")
    private static let moveVerb = verbWord("MOVE")
    private static let tailVerb = verbWord("TAIL")

    /// The numbers after a body line's key: the slot lengths, then, in packed journals, the
    /// record's segment and offset.
    private struct LineNumbers {
        var lengths: SlotLengths
        var location: (segment: Int, offset: Int)
    }

    /// Why the numbers of a line were refused.
    private enum NumbersFailure: Error {
        case malformed
        /// The lengths add up past `Int.max`.
        case overflow
    }

    /// Parses the `fieldCount` space-separated numbers of `line` from `start` to `end`: the
    /// first `slotCount` are slot lengths, the rest the location.
    ///
    /// - Complexity: O(end - start); one or two slot lengths are kept inline (no array per
    ///   line), more in an array.
    @inline(__always)
    private static func parseNumbers(
        _ line: Slice<UnsafeBufferPointer<UInt8>>, from start: Int, to end: Int, slotCount: Int, fieldCount: Int
    ) -> Result<LineNumbers, NumbersFailure> {
        let space = UInt8(ascii: " ")
        var inline = (first: 0, second: 0)
        var spilled: [Int] = []
        if slotCount > 2 { spilled.reserveCapacity(min(slotCount, 64)) }
        var location = (segment: 0, offset: 0)
        var fields = 0
        var total = 0
        var fieldStart = start
        while true {
            var fieldEnd = fieldStart
            while fieldEnd < end && line[fieldEnd] != space { fieldEnd += 1 }
            guard fields < fieldCount, let length = parseLength(line[fieldStart..<fieldEnd]) else {
                return .failure(.malformed)
            }
            let (sum, overflow) = total.addingReportingOverflow(length)
            guard !overflow else { return .failure(.overflow) }
            total = sum
            if fields >= slotCount {
                if fields == slotCount { location.segment = length } else { location.offset = length }
            } else if slotCount > 2 {
                spilled.append(length)
            } else if fields == 0 {
                inline.first = length
            } else {
                inline.second = length
            }
            fields += 1
            guard fieldEnd < end else { break }
            fieldStart = fieldEnd + 1
        }
        guard fields == fieldCount else { return .failure(.malformed) }
        let lengths =
            slotCount > 2 ? SlotLengths(spilled) : SlotLengths(inline: inline.first, inline.second, count: slotCount)
        return .success(LineNumbers(lengths: lengths, location: location))
    }

    /// A length as Java's `Long.parseLong` reads it: optional `+`, decimal digits, at most
    /// `Int64.max`. `-0` is zero; any other negative length is refused.
    static func parseLength(_ field: Slice<UnsafeBufferPointer<UInt8>>) -> Int? {
        var digits = field[...]
        var isNegative = false
        if let sign = digits.first, sign == UInt8(ascii: "+") || sign == UInt8(ascii: "-") {
            isNegative = sign == UInt8(ascii: "-")
            digits = digits.dropFirst()
        }
        guard !digits.isEmpty else { return nil }
        var value: Int64 = 0
        for byte in digits {
            guard byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") else { return nil }
            let (times10, overflow1) = value.multipliedReportingOverflow(by: 10)
            let (next, overflow2) = times10.addingReportingOverflow(Int64(byte - UInt8(ascii: "0")))
            guard !overflow1, !overflow2 else { return nil }
            value = next
        }
        if isNegative && value != 0 { return nil }
        return Int(exactly: value)
    }

    static func quoted(_ line: Slice<UnsafeBufferPointer<UInt8>>) -> String {
        String(reflecting: String(decoding: line.prefix(200), as: UTF8.self))
    }
}
