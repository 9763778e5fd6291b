import SwiftyCacheCore

/// Appending JSON's scalars to the encoder's output: the one place that knows how a string is
/// escaped and how a number is spelled.
extension JSONOutputBuffer {
    /// Appends `text` (ASCII written in the source).
    mutating func append(_ text: StaticString) {
        append(contentsOf: UnsafeBufferPointer(start: text.utf8Start, count: text.utf8CodeUnitCount))
    }

    /// Appends the UTF-8 of `string` as it is.
    mutating func appendUTF8(of string: String) {
        string.withUTF8Bytes { append(contentsOf: $0) }
    }

    /// Appends `string` as a quoted JSON string. Quotation marks, reverse solidi and control
    /// characters are escaped, and solidi too when `escapesSlashes` (Foundation's default).
    /// The common case, nothing to escape, is one scan, one reservation and one copy.
    mutating func appendJSONString(_ string: String, escapesSlashes: Bool) {
        string.withUTF8Bytes { utf8 in
            if plainRunEnd(utf8, from: 0, escapesSlashes: escapesSlashes) == utf8.count {
                appendQuoted(utf8)
            } else {
                append(UInt8(ascii: "\""))
                appendJSONEscaped(utf8, escapesSlashes: escapesSlashes)
                append(UInt8(ascii: "\""))
            }
        }
    }

    /// Appends UTF-8 bytes, escaped as inside a JSON string, without the quotation marks.
    /// Runs that need no escape are found eight bytes at a time and copied whole.
    mutating func appendJSONEscaped(_ utf8: UnsafeBufferPointer<UInt8>, escapesSlashes: Bool) {
        var runStart = 0
        var index = 0
        while index < utf8.count {
            index = plainRunEnd(utf8, from: index, escapesSlashes: escapesSlashes)
            guard index < utf8.count else { break }
            append(contentsOf: UnsafeBufferPointer(rebasing: utf8[runStart..<index]))
            appendJSONEscape(of: utf8[index])
            index += 1
            runStart = index
        }
        append(contentsOf: UnsafeBufferPointer(rebasing: utf8[runStart...]))
    }

    /// The index of the first byte from `start` on that needs an escape, or the end.
    private func plainRunEnd(_ utf8: UnsafeBufferPointer<UInt8>, from start: Int, escapesSlashes: Bool) -> Int {
        var index = start
        if let base = UnsafeRawPointer(utf8.baseAddress) {
            let ones: UInt64 = 0x0101_0101_0101_0101
            let highs: UInt64 = 0x8080_8080_8080_8080
            let slash = escapesSlashes ? ones &* 0x2F : ones &* 0x22
            // Byte `i` of the text is byte `i` of the word on any machine, so the lowest flag is
            // the first byte to escape (each test flags its first byte exactly). A byte below
            // 0x20, or equal to `"`, `\` or (when escaped) `/`, sets its high bit.
            func flags(_ word: UInt64) -> UInt64 {
                ((word &- ones &* 0x20) & ~word | hasZeroByte(word ^ (ones &* 0x22))
                    | hasZeroByte(word ^ (ones &* 0x5C)) | hasZeroByte(word ^ slash)) & highs
            }
            // Two words a step while sixteen bytes remain: one branch for both.
            while utf8.count &- index >= 16 {
                let first = flags(UInt64(littleEndian: base.loadUnaligned(fromByteOffset: index, as: UInt64.self)))
                let second = flags(
                    UInt64(littleEndian: base.loadUnaligned(fromByteOffset: index &+ 8, as: UInt64.self)))
                if first | second != 0 {
                    return index &+ (first != 0 ? first.trailingZeroBitCount : 64 &+ second.trailingZeroBitCount) >> 3
                }
                index &+= 16
            }
            while utf8.count &- index >= 8 {
                let found = flags(UInt64(littleEndian: base.loadUnaligned(fromByteOffset: index, as: UInt64.self)))
                if found != 0 { return index &+ found.trailingZeroBitCount >> 3 }
                index &+= 8
            }
        }
        while index < utf8.count {
            let byte = utf8[index]
            if byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\")
                || (escapesSlashes && byte == UInt8(ascii: "/"))
            {
                return index
            }
            index += 1
        }
        return index
    }

    private mutating func appendJSONEscape(of byte: UInt8) {
        let escape = UInt8(ascii: "\\")
        switch byte {
        case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): append(escape, byte)
        case 0x08: append(escape, UInt8(ascii: "b"))
        case 0x0C: append(escape, UInt8(ascii: "f"))
        case 0x0A: append(escape, UInt8(ascii: "n"))
        case 0x0D: append(escape, UInt8(ascii: "r"))
        case 0x09: append(escape, UInt8(ascii: "t"))
        default:
            append("\\u00")
            append(hexDigit(byte >> 4), hexDigit(byte & 0xF))
        }
    }

    /// Appends the decimal digits of a magnitude, after a minus sign when `isNegative`.
    mutating func appendJSONInteger(magnitude: UInt64, isNegative: Bool) {
        if isNegative { append(UInt8(ascii: "-")) }
        if magnitude < 10 {
            append(UInt8(ascii: "0") &+ UInt8(truncatingIfNeeded: magnitude))
            return
        }
        var digits = 0
        var rest = magnitude
        while rest > 0 {
            digits += 1
            rest /= 10
        }
        // Written back to front into room for exactly that many (at most 20, `UInt64.max`).
        appendWriting(atMost: digits) { room in
            var rest = magnitude
            var index = room.count
            while rest > 0, index > 0 {
                index -= 1
                room[index] = UInt8(ascii: "0") &+ UInt8(truncatingIfNeeded: rest % 10)
                rest /= 10
            }
            return room.count
        }
    }

    /// Appends an `Int` in decimal: the common case, without the generic overloads' witness
    /// calls (the optimizer merges those into one function that takes the type as a parameter).
    mutating func appendJSONInteger(_ value: Int) {
        appendJSONInteger(magnitude: UInt64(value.magnitude), isNegative: value < 0)
    }

    /// Appends a signed integer in decimal.
    mutating func appendJSONInteger<T: SignedInteger & FixedWidthInteger>(_ value: T) {
        appendJSONInteger(magnitude: UInt64(value.magnitude), isNegative: value < 0)
    }

    /// Appends an unsigned integer in decimal.
    mutating func appendJSONInteger<T: UnsignedInteger & FixedWidthInteger>(_ value: T) {
        appendJSONInteger(magnitude: UInt64(value), isNegative: false)
    }

    /// Appends a finite floating-point number in its shortest form that reads back exactly, as
    /// Foundation writes it: `1` rather than `1.0`, `1e+20`, `1.5e-07`.
    mutating func appendJSONNumber(_ description: String) {
        var text = description
        text.withUTF8 { utf8 in
            let trimmed =
                utf8.count > 2 && utf8[utf8.count - 2] == UInt8(ascii: ".") && utf8[utf8.count - 1] == UInt8(ascii: "0")
                ? UnsafeBufferPointer(rebasing: utf8[..<(utf8.count - 2)]) : utf8
            append(contentsOf: trimmed)
        }
    }

    /// Appends `true` or `false`.
    mutating func appendJSONBool(_ value: Bool) {
        append(value ? "true" : "false")
    }

    /// Appends `null`.
    mutating func appendJSONNull() {
        append("null")
    }
}

/// The lowercase hexadecimal digit of a value below 16.
private func hexDigit(_ value: UInt8) -> UInt8 {
    value < 10 ? UInt8(ascii: "0") &+ value : UInt8(ascii: "a") &+ (value &- 10)
}

/// The high bit of some byte set when `word` has a zero byte (and only then, for the word as a
/// whole): the classic test `(w - 0x01…) & ~w`, to be masked with `0x80…`.
@inline(__always)
private func hasZeroByte(_ word: UInt64) -> UInt64 {
    (word &- 0x0101_0101_0101_0101) & ~word
}
