#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif

/// A JSON decoder that scans the bytes once into a flat table of offsets and decodes from it,
/// comparing keys as UTF-8 bytes: several times faster than Foundation's `JSONDecoder` for the
/// small model values a cache holds. It reads everything `JSONEncoder` writes.
///
/// It takes Foundation's strategies (their types are Foundation's); ``init(matching:)`` copies
/// a configured `JSONDecoder`'s:
///
/// ```swift
/// var decoder = DirectJSONDecoder()
/// decoder.keyDecodingStrategy = .convertFromSnakeCase
/// let note = try decoder.decode(Note.self, from: data)
/// ```
///
/// Input is RFC 8259 JSON in UTF-8. Hostile input is refused with a `DecodingError`: invalid
/// UTF-8 or escapes, numbers out of the requested type's range, nesting deeper than 512 levels.
/// The scan never recurses and its table takes at most about 12 bytes per input byte. Of
/// duplicate keys in one object, the first is read, as Foundation reads it.
///
/// A value type: copies are independent, and it is `Sendable`.
public struct DirectJSONDecoder: Sendable {
    /// How a `Date` is read. The default, `.deferredToDate`, reads seconds since 2001-01-01.
    public var dateDecodingStrategy: JSONDecoder.DateDecodingStrategy = .deferredToDate
    /// How `Data` is read. The default is base64.
    public var dataDecodingStrategy: JSONDecoder.DataDecodingStrategy = .base64
    /// How infinities and NaN are read. The default refuses them.
    public var nonConformingFloatDecodingStrategy: JSONDecoder.NonConformingFloatDecodingStrategy = .throw
    /// How member names become coding keys. The default uses them as they are.
    public var keyDecodingStrategy: JSONDecoder.KeyDecodingStrategy = .useDefaultKeys
    /// Values handed to every `init(from:)` through `Decoder.userInfo`.
    public var userInfo: [CodingUserInfoKey: any Sendable] = [:]

    /// A decoder with Foundation's defaults.
    public init() {}

    /// A decoder with the strategies and user info of `decoder`.
    public init(matching decoder: JSONDecoder) {
        dateDecodingStrategy = decoder.dateDecodingStrategy
        dataDecodingStrategy = decoder.dataDecodingStrategy
        nonConformingFloatDecodingStrategy = decoder.nonConformingFloatDecodingStrategy
        keyDecodingStrategy = decoder.keyDecodingStrategy
        userInfo = decoder.userInfo
    }

    /// The value of type `type` that the JSON text `data` holds.
    ///
    /// - Throws: `DecodingError`, with the coding path: `dataCorrupted` for text that is not
    ///   valid JSON or a value out of range, `typeMismatch`, `keyNotFound`, `valueNotFound`;
    ///   any error the type's `init(from:)` throws.
    /// - Complexity: O(n) in the text's length, for types that read each member once.
    public func decode<T: Decodable>(_ type: T.Type, from data: Data) throws -> T {
        try decode(type, fromBytes: data.withUnsafeBytes { [UInt8]($0) })
    }

    /// Decodes from bytes the caller already holds as an array.
    func decode<T: Decodable>(_ type: T.Type, fromBytes bytes: [UInt8]) throws -> T {
        try Self.decode(type, from: bytes, options: Options(self))
    }

    /// Decodes `bytes`, which the caller copied into an array (the decoder keeps them), with
    /// settings built once.
    static func decode<T: Decodable>(_ type: T.Type, from bytes: [UInt8], options: Options) throws -> T {
        let tokens = try bytes.withUnsafeBufferPointer { try JSONScanner.scan($0) }
        let state = JSONDecodingState(bytes: bytes, tokens: tokens, options: options)
        return try state.decode(type, at: 0)
    }

    /// The bytes of the token table a scan of `data` builds, for the tests of its bound.
    package static func tableByteCount(for data: Data) throws -> Int {
        let bytes = data.withUnsafeBytes { [UInt8]($0) }
        let tokens = try bytes.withUnsafeBufferPointer { try JSONScanner.scan($0) }
        return tokens.capacity * MemoryLayout<JSONToken>.stride
    }

    /// The decoder's settings as the decoding state reads them: a class, so that a decode hands
    /// them on with one reference (the strategies hold closures), and a cache builds them once.
    final class Options: Sendable {
        let date: JSONDecoder.DateDecodingStrategy
        let data: JSONDecoder.DataDecodingStrategy
        let nonConformingFloat: JSONDecoder.NonConformingFloatDecodingStrategy
        let key: JSONDecoder.KeyDecodingStrategy
        let convertsKeys: Bool
        let userInfo: [CodingUserInfoKey: any Sendable]

        init(_ decoder: DirectJSONDecoder) {
            date = decoder.dateDecodingStrategy
            data = decoder.dataDecodingStrategy
            nonConformingFloat = decoder.nonConformingFloatDecodingStrategy
            key = decoder.keyDecodingStrategy
            if case .useDefaultKeys = decoder.keyDecodingStrategy { convertsKeys = false } else { convertsKeys = true }
            userInfo = decoder.userInfo
        }
    }
}
