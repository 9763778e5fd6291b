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

    /// The UTF-8 bytes of a string's contents (between its quotes), already validated by the
    /// scanner but for the pairing of `\u` surrogates, which is checked here.
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
                let scalar = try scalar(in: bytes, at: &index)
                output.append(contentsOf: String(Character(scalar)).utf8)
            default: output.append(escaped)
            }
        }
        return output
    }

    /// The scalar of a `\u` escape whose four digits start at `index`, with the low half that
    /// must follow a high surrogate; `index` moves past what was read.
    private static func scalar(in bytes: UnsafeBufferPointer<UInt8>, at index: inout Int) throws(Failure)
        -> Unicode.Scalar
    {
        let first = try codeUnit(in: bytes, at: index)
        index += 4
        switch first {
        case 0xD800...0xDBFF:
            guard index + 6 <= bytes.count, bytes[index] == UInt8(ascii: "\\"), bytes[index + 1] == UInt8(ascii: "u")
            else { throw Failure(message: "A high surrogate without its low half") }
            let second = try codeUnit(in: bytes, at: index + 2)
            guard (0xDC00...0xDFFF).contains(second) else {
                throw Failure(message: "A high surrogate without its low half")
            }
            index += 6
            let value = 0x10000 + ((UInt32(first) - 0xD800) << 10) + (UInt32(second) - 0xDC00)
            guard let scalar = Unicode.Scalar(value) else { throw Failure(message: "Invalid surrogate pair") }
            return scalar
        case 0xDC00...0xDFFF:
            throw Failure(message: "A low surrogate without its high half")
        default:
            guard let scalar = Unicode.Scalar(first) else { throw Failure(message: "Invalid \\u escape") }
            return scalar
        }
    }

    private static func codeUnit(in bytes: UnsafeBufferPointer<UInt8>, at index: Int) throws(Failure) -> UInt16 {
        guard index + 4 <= bytes.count else { throw Failure(message: "Invalid \\u escape") }
        var value: UInt16 = 0
        for offset in 0..<4 {
            guard let digit = hexValue(bytes[index + offset]) else { throw Failure(message: "Invalid \\u escape") }
            value = value << 4 | UInt16(digit)
        }
        return value
    }
}
