/// Strings and numbers: their grammar, escapes and UTF-8, checked as they are scanned.
extension JSONScanner {
    /// A string from its opening quote; its token spans the bytes between the quotes.
    mutating func scanString() throws {
        let start = position + 1
        var index = start
        var flags: UInt8 = 0
        while true {
            index = plainRunEnd(from: index)
            guard index < bytes.count else {
                position = index
                throw fault("Unterminated string")
            }
            let byte = bytes[index]
            if byte == UInt8(ascii: "\"") { break }
            if byte == UInt8(ascii: "\\") {
                flags |= JSONToken.hasEscapes
                index = try escapeEnd(after: index)
            } else if byte < 0x20 {
                position = index
                throw fault("Unescaped control character in a string")
            } else if byte < 0x80 {
                index += 1
            } else {
                index = try utf8SequenceEnd(at: index)
            }
        }
        append(.string, flags: flags, start: start, end: index)
        position = index + 1
    }

    /// The index of the first byte from `start` on that is not plain ASCII text of a string (a
    /// quote, a reverse solidus, a control character or a byte of 0x80 or more), eight bytes at
    /// a time; in the last seven bytes of the input it may stop early, before a byte the caller
    /// then looks at one by one.
    private func plainRunEnd(from start: Int) -> Int {
        guard let base = UnsafeRawPointer(bytes.baseAddress) else { return start }
        let ones: UInt64 = 0x0101_0101_0101_0101
        var index = start
        while index + 8 <= bytes.count {
            // Little-endian order whatever the machine's: byte `i` of the input is byte `i` of
            // the word, so the lowest flag found is the first special byte.
            let word = UInt64(littleEndian: base.loadUnaligned(fromByteOffset: index, as: UInt64.self))
            let quote = word ^ (ones &* 0x22)
            let backslash = word ^ (ones &* 0x5C)
            // High bits: a byte below 0x20, a zero byte of either comparison, or a high byte.
            // Each test flags its first byte exactly (a borrow only reaches the bytes above it).
            let special =
                ((word &- ones &* 0x20) & ~word) | ((quote &- ones) & ~quote) | ((backslash &- ones) & ~backslash)
                | word
            let flags = special & (ones &* 0x80)
            if flags != 0 { return index + flags.trailingZeroBitCount >> 3 }
            index += 8
        }
        return index
    }

    /// The index after the escape sequence at `index` (a reverse solidus).
    private mutating func escapeEnd(after index: Int) throws -> Int {
        position = index
        guard index + 1 < bytes.count else { throw fault("Unterminated escape") }
        switch bytes[index + 1] {
        case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"), UInt8(ascii: "b"), UInt8(ascii: "f"),
            UInt8(ascii: "n"), UInt8(ascii: "r"), UInt8(ascii: "t"):
            return index + 2
        case UInt8(ascii: "u"):
            switch JSONUnescaping.unicodeEscape(in: bytes, at: index + 2) {
            case .scalar(_, let length): return index + 2 + length
            case .failure(let message): throw fault(message)
            }
        default:
            throw fault("Invalid escape")
        }
    }

    /// The index after the UTF-8 sequence that starts at `index` with a byte of 0x80 or more.
    private mutating func utf8SequenceEnd(at index: Int) throws -> Int {
        position = index
        let lead = bytes[index]
        let length: Int
        var low: UInt8 = 0x80
        var high: UInt8 = 0xBF
        switch lead {
        case 0xC2...0xDF: length = 2
        case 0xE0: (length, low) = (3, 0xA0)
        case 0xE1...0xEC, 0xEE...0xEF: length = 3
        case 0xED: (length, high) = (3, 0x9F)
        case 0xF0: (length, low) = (4, 0x90)
        case 0xF1...0xF3: length = 4
        case 0xF4: (length, high) = (4, 0x8F)
        default: throw fault("Invalid UTF-8")
        }
        guard index + length <= bytes.count, (low...high).contains(bytes[index + 1]),
            bytes[(index + 2)..<(index + length)].allSatisfy({ $0 & 0xC0 == 0x80 })
        else { throw fault("Invalid UTF-8") }
        return index + length
    }

    /// A number: `-? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [+-]? [0-9]+)?`.
    mutating func scanNumber() throws {
        let start = position
        var index = position
        if bytes[index] == UInt8(ascii: "-") { index += 1 }
        guard index < bytes.count, isDigit(bytes[index]) else { throw fault("Invalid number") }
        if bytes[index] == UInt8(ascii: "0") {
            index += 1
        } else {
            index = digitsEnd(from: index)
        }
        var flags = JSONToken.isPlainInteger
        if index < bytes.count, bytes[index] == UInt8(ascii: ".") {
            flags = 0
            index += 1
            guard index < bytes.count, isDigit(bytes[index]) else { throw fault("Invalid number") }
            index = digitsEnd(from: index)
        }
        if index < bytes.count, bytes[index] | 0x20 == UInt8(ascii: "e") {
            flags = 0
            index += 1
            if index < bytes.count, bytes[index] == UInt8(ascii: "+") || bytes[index] == UInt8(ascii: "-") {
                index += 1
            }
            guard index < bytes.count, isDigit(bytes[index]) else { throw fault("Invalid number") }
            index = digitsEnd(from: index)
        }
        append(.number, flags: flags, start: start, end: index)
        position = index
    }

    private func isDigit(_ byte: UInt8) -> Bool { byte &- UInt8(ascii: "0") < 10 }

    private func digitsEnd(from start: Int) -> Int {
        var index = start
        while index < bytes.count, isDigit(bytes[index]) { index += 1 }
        return index
    }
}
