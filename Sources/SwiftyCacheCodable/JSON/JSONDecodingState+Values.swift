#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Reading one value from its token: the scalars, and the types read without `init(from:)`.
extension JSONDecodingState {
    /// The value of type `T` at token `index`.
    func decode<T: Decodable>(_ type: T.Type, at index: Int) throws -> T {
        if T.self == String.self { return reinterpret(try string(at: index), as: T.self) }
        if T.self == Int.self { return reinterpret(try integer(Int.self, at: index), as: T.self) }
        if T.self == Double.self { return reinterpret(try float(Double.self, at: index), as: T.self) }
        if T.self == Bool.self { return reinterpret(try bool(at: index), as: T.self) }
        if T.self == [String].self { return reinterpret(try array(at: index) { try string(at: $0) }, as: T.self) }
        if T.self == [Int].self {
            return reinterpret(try array(at: index) { try integer(Int.self, at: $0) }, as: T.self)
        }
        if let leaf = FoundationLeaf(T.self) { return try decodeFoundationValue(leaf, as: T.self, at: index) }
        let convertsKeys = !(options.convertsKeys && T.self is any JSONStringKeyedDictionary.Type)
        return try T(from: JSONValueDecoder(state: self, index: index, convertsKeys: convertsKeys))
    }

    private func array<Element>(at index: Int, _ element: (Int) throws -> Element) throws -> [Element] {
        guard tokens[index].kind == .array else { throw mismatch([Element].self, at: index) }
        var result: [Element] = []
        result.reserveCapacity(Int(tokens[index].end))
        var child = index + 1
        let end = Int(tokens[index].next)
        while child < end {
            result.append(try element(child))
            child = Int(tokens[child].next)
        }
        return result
    }

    /// The string at token `index`.
    func string(at index: Int) throws -> String {
        let token = tokens[index]
        guard token.kind == .string else { throw mismatch(String.self, at: index) }
        let range = Int(token.start)..<Int(token.end)
        guard token.flags & JSONToken.hasEscapes != 0 else {
            return String(decoding: bytes[range], as: UTF8.self)
        }
        let unescaped = bytes.withUnsafeBufferPointer { all -> Result<[UInt8], JSONUnescaping.Failure> in
            Result { () throws(JSONUnescaping.Failure) in
                try JSONUnescaping.unescape(UnsafeBufferPointer(rebasing: all[range]))
            }
        }
        switch unescaped {
        case .success(let utf8): return String(decoding: utf8, as: UTF8.self)
        case .failure(let failure): throw corrupted(at: index, failure.message)
        }
    }

    /// The number text at token `index`.
    func numberText(at index: Int, for type: Any.Type) throws -> String {
        let token = tokens[index]
        guard token.kind == .number else { throw mismatch(type, at: index) }
        return String(decoding: bytes[Int(token.start)..<Int(token.end)], as: UTF8.self)
    }

    /// An integer of type `T`; a number with a fraction or exponent must be one exactly.
    func integer<T: FixedWidthInteger>(_ type: T.Type, at index: Int) throws -> T {
        let token = tokens[index]
        guard token.kind == .number else { throw mismatch(type, at: index) }
        if token.flags & JSONToken.isPlainInteger != 0, let value = plainInteger(T.self, token) { return value }
        let text = try numberText(at: index, for: type)
        if token.flags & JSONToken.isPlainInteger == 0, let double = representable(text), let value = T(exactly: double)
        {
            return value
        }
        throw corrupted(at: index, "Parsed JSON number <\(text)> does not fit in \(T.self).")
    }

    /// Digits read straight into `T`; `nil` on overflow or a sign `T` cannot hold.
    private func plainInteger<T: FixedWidthInteger>(_ type: T.Type, _ token: JSONToken) -> T? {
        var index = Int(token.start)
        let end = Int(token.end)
        let isNegative = bytes[index] == UInt8(ascii: "-")
        if isNegative { index += 1 }
        var value: T = 0
        while index < end {
            let digit = T(bytes[index] &- UInt8(ascii: "0"))
            let (shifted, overflow1) = value.multipliedReportingOverflow(by: 10)
            let (next, overflow2) =
                isNegative ? shifted.subtractingReportingOverflow(digit) : shifted.addingReportingOverflow(digit)
            guard !overflow1, !overflow2 else { return nil }
            value = next
            index += 1
        }
        return value
    }

    /// A `Double` or `Float`: a finite number (parsed as a `Double` first, as Foundation does),
    /// or a string the non-conforming strategy names.
    func float<F: BinaryFloatingPoint>(_ type: F.Type, at index: Int) throws -> F {
        let token = tokens[index]
        if token.kind == .string,
            case .convertFromString(let positive, let negative, let nan) = options.nonConformingFloat
        {
            switch try string(at: index) {
            case positive: return .infinity
            case negative: return -.infinity
            case nan: return .nan
            default: throw mismatch(type, at: index)
            }
        }
        guard token.kind == .number else { throw mismatch(type, at: index) }
        if token.flags & JSONToken.isPlainInteger != 0, token.end - token.start < 16,
            let integer = plainInteger(Int64.self, token)
        {
            return F(integer)
        }
        let text = try numberText(at: index, for: type)
        guard let double = representable(text), F(double).isFinite, !(F(double).isZero && !double.isZero)
        else {
            throw corrupted(at: index, "Parsed JSON number <\(text)> does not fit in \(F.self).")
        }
        return F(double)
    }

    /// The `Double` a number's text spells, or `nil` when it is out of range: infinite, or
    /// zero although its digits are not (an underflow), which Foundation refuses too.
    private func representable(_ text: String) -> Double? {
        guard let double = Double(text), double.isFinite else { return nil }
        if double.isZero {
            let mantissa = text.utf8.prefix { $0 | 0x20 != UInt8(ascii: "e") }
            guard !mantissa.contains(where: { (UInt8(ascii: "1")...UInt8(ascii: "9")).contains($0) }) else {
                return nil
            }
        }
        return double
    }

    /// `true` or `false`.
    func bool(at index: Int) throws -> Bool {
        switch tokens[index].kind {
        case .trueLiteral: return true
        case .falseLiteral: return false
        default: throw mismatch(Bool.self, at: index)
        }
    }

    // MARK: Errors

    func mismatch(_ type: Any.Type, at index: Int) -> DecodingError {
        let found: String
        switch tokens[index].kind {
        case .object: found = "a dictionary"
        case .array: found = "an array"
        case .string: found = "a string"
        case .number: found = "a number"
        case .trueLiteral, .falseLiteral: found = "bool"
        case .null: found = "null"
        }
        let context = DecodingError.Context(
            codingPath: codingPath(of: index),
            debugDescription: "Expected to decode \(type) but found \(found) instead.")
        return tokens[index].kind == .null ? .valueNotFound(type, context) : .typeMismatch(type, context)
    }

    func corrupted(at index: Int, _ message: String) -> DecodingError {
        .dataCorrupted(.init(codingPath: codingPath(of: index), debugDescription: message))
    }
}
