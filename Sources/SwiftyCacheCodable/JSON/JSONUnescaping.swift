/// The escapes of a JSON string, undone.
enum JSONUnescaping {
    /// The value of a hexadecimal digit; `nil` for any other byte.
    static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte &- UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): byte &- UInt8(ascii: "a") &+ 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): byte &- UInt8(ascii: "A") &+ 10
        default: nil
        }
    }

    /// Why an escaped string cannot be a Swift string.
    struct Failure: Error {
        let message: String
    }

    /// The UTF-8 bytes of a string's contents (between its quotes), which the scanner validated
    /// (its `\u` escapes with ``unicodeEscape(in:at:)``, the decoder used here too).
    static func unescape(_ bytes: UnsafeBufferPointer<UInt8>) throws(Failure) -> [UInt8] {
        var output: [UInt8] = []
        output.reserveCapacity(bytes.count)
        var index = 0
        while index < bytes.count {
            let byte = bytes[index]
            guard byte == UInt8(ascii: "\\"), index + 1 < bytes.count else {
                output.append(byte)
                index += 1
                continue
            }
            let escaped = bytes[index + 1]
            index += 2
            switch escaped {
            case UInt8(ascii: "b"): output.append(0x08)
            case UInt8(ascii: "f"): output.append(0x0C)
            case UInt8(ascii: "n"): output.append(0x0A)
            case UInt8(ascii: "r"): output.append(0x0D)
            case UInt8(ascii: "t"): output.append(0x09)
            case UInt8(ascii: "u"):
                switch unicodeEscape(in: bytes, at: index) {
                case .scalar(let scalar, let length):
                    output.append(contentsOf: String(Character(scalar)).utf8)
                    index += length
                case .failure(let message):
                    throw Failure(message: message)
                }
            default: output.append(escaped)
            }
        }
        return output
    }

    /// A `\u` escape decoded: the one decoder of both the scanner, which validates every string
    /// with it, and ``unescape(_:)``.
    enum UnicodeEscape {
        /// The scalar, and the bytes the escape took after its `\u` (4, or 10 for a pair).
        case scalar(Unicode.Scalar, length: Int)
        case failure(String)
    }

    /// Decodes the `\u` escape whose four digits start at `index` in `bytes`, with the low half
    /// that must follow a high surrogate (as Foundation requires too).
    ///
    /// - Complexity: O(1): at most ten bytes.
    static func unicodeEscape(in bytes: UnsafeBufferPointer<UInt8>, at index: Int) -> UnicodeEscape {
        guard let first = codeUnit(in: bytes, at: index) else { return .failure("Invalid \\u escape") }
        switch first {
        case 0xD800...0xDBFF:
            guard index + 10 <= bytes.count, bytes[index + 4] == UInt8(ascii: "\\"),
                bytes[index + 5] == UInt8(ascii: "u"),
                let second = codeUnit(in: bytes, at: index + 6), (0xDC00...0xDFFF).contains(second)
            else { return .failure("A high surrogate without its low half") }
            let value = 0x10000 + ((UInt32(first) - 0xD800) << 10) + (UInt32(second) - 0xDC00)
            guard let scalar = Unicode.Scalar(value) else { return .failure("Invalid surrogate pair") }
            return .scalar(scalar, length: 10)
        case 0xDC00...0xDFFF:
            return .failure("A low surrogate without its high half")
        default:
            guard let scalar = Unicode.Scalar(first) else { return .failure("Invalid \\u escape") }
            return .scalar(scalar, length: 4)
        }
    }

    /// The four hexadecimal digits at `index`, as a code unit; `nil` when they are not.
    private static func codeUnit(in bytes: UnsafeBufferPointer<UInt8>, at index: Int) -> UInt16? {
        guard index + 4 <= bytes.count else { return nil }
        var value: UInt16 = 0
        for offset in 0..<4 {
            guard let digit = hexValue(bytes[index + offset]) else { return nil }
            value = value << 4 | UInt16(digit)
        }
        return value
    }
}
