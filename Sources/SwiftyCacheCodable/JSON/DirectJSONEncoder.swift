#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif

/// A JSON encoder that writes a value's bytes straight into one buffer, with no intermediate
/// tree: several times faster than Foundation's `JSONEncoder` for the small model values a cache
/// holds, and standard JSON that `JSONDecoder` reads to an equal value.
///
/// It is shaped like Foundation's and takes the same strategies (their types are Foundation's),
/// so moving a configured `JSONEncoder` over is a matter of copying its properties, which
/// ``init(matching:)`` does:
///
/// ```swift
/// var encoder = DirectJSONEncoder()
/// encoder.dateEncodingStrategy = .iso8601
/// let data = try encoder.encode(note)
/// ```
///
/// What Foundation special-cases is handled the same way: `Date`, `Data` (base64 by default),
/// `URL` (its absolute string), `Decimal` (a number), dictionaries keyed by `String` or `Int`
/// (objects, their keys never converted by a key strategy), nested containers and
/// `superEncoder()`. With `.sortedKeys` members are ordered by the UTF-8 bytes of their keys.
///
/// A value type: copies are independent, and it is `Sendable`.
public struct DirectJSONEncoder: Sendable {
    /// How the output is formatted: `.sortedKeys`, `.prettyPrinted`, `.withoutEscapingSlashes`.
    /// The default writes compact JSON in the order the value encodes its members, with `/`
    /// escaped as Foundation does.
    public var outputFormatting: JSONEncoder.OutputFormatting = []
    /// How a `Date` is written. The default, `.deferredToDate`, writes the seconds since
    /// 2001-01-01 as Foundation does.
    public var dateEncodingStrategy: JSONEncoder.DateEncodingStrategy = .deferredToDate
    /// How `Data` is written. The default is base64.
    public var dataEncodingStrategy: JSONEncoder.DataEncodingStrategy = .base64
    /// How infinities and NaN are written. The default throws `EncodingError.invalidValue`.
    public var nonConformingFloatEncodingStrategy: JSONEncoder.NonConformingFloatEncodingStrategy = .throw
    /// How coding keys become member names. The default uses them as they are.
    public var keyEncodingStrategy: JSONEncoder.KeyEncodingStrategy = .useDefaultKeys
    /// Values handed to every `encode(to:)` through `Encoder.userInfo`.
    public var userInfo: [CodingUserInfoKey: any Sendable] = [:]

    /// An encoder with Foundation's defaults.
    public init() {}

    /// An encoder with the strategies, formatting and user info of `encoder`.
    public init(matching encoder: JSONEncoder) {
        outputFormatting = encoder.outputFormatting
        dateEncodingStrategy = encoder.dateEncodingStrategy
        dataEncodingStrategy = encoder.dataEncodingStrategy
        nonConformingFloatEncodingStrategy = encoder.nonConformingFloatEncodingStrategy
        keyEncodingStrategy = encoder.keyEncodingStrategy
        userInfo = encoder.userInfo
    }

    /// The JSON text of `value`, in UTF-8.
    ///
    /// - Throws: `EncodingError.invalidValue`, with the coding path, for a value JSON cannot
    ///   hold (an infinity under `.throw`, a value that encodes nothing at the top level) or a
    ///   container used out of order; any error the value's `encode(to:)` throws.
    /// - Complexity: O(n) in the output's length (O(n log n) with `.sortedKeys`).
    public func encode<T: Encodable>(_ value: T) throws -> Data {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(256)
        try encode(value, appendingTo: &bytes)
        return Data(bytes)
    }

    /// Appends the JSON text of `value` to `bytes`: what the cache uses to write an envelope
    /// and its payload into one buffer. On a throw, `bytes` keeps what it held before.
    func encode<T: Encodable>(_ value: T, appendingTo bytes: inout [UInt8]) throws {
        try Self.encode(value, appendingTo: &bytes, options: Options(self))
    }

    /// Appends the JSON text of `value` with settings built once (by a cache's format), with the
    /// encoding state `slot` keeps, if it is free.
    static func encode<T: Encodable>(
        _ value: T, appendingTo bytes: inout [UInt8], options: Options, reusing slot: JSONEncodingStateSlot? = nil
    ) throws {
        let start = bytes.count
        do {
            if let slot {
                try slot.withState(options: options) { try encode(value, with: $0, appendingTo: &bytes) }
            } else {
                try encode(value, with: JSONEncodingState(options: options), appendingTo: &bytes)
            }
        } catch {
            bytes.removeSubrange(start...)
            throw error
        }
        if !options.formatting.isDisjoint(with: [.sortedKeys, .prettyPrinted]) {
            try JSONReformatter.reformat(&bytes, from: start, options: options.formatting)
        }
    }

    private static func encode<T: Encodable>(
        _ value: T, with state: JSONEncodingState, appendingTo bytes: inout [UInt8]
    ) throws {
        try state.encode(value, key: nil)
        try state.finish(into: &bytes)
    }

    /// The encoder's settings as the encoding state reads them: a class, so that an encode
    /// hands them on with one reference (the strategies hold closures), and a cache builds them
    /// once.
    final class Options: Sendable {
        let formatting: JSONEncoder.OutputFormatting
        let escapesSlashes: Bool
        let date: JSONEncoder.DateEncodingStrategy
        let data: JSONEncoder.DataEncodingStrategy
        let nonConformingFloat: JSONEncoder.NonConformingFloatEncodingStrategy
        let key: JSONEncoder.KeyEncodingStrategy
        let convertsKeys: Bool
        let userInfo: [CodingUserInfoKey: any Sendable]

        init(_ encoder: DirectJSONEncoder) {
            formatting = encoder.outputFormatting
            escapesSlashes = !encoder.outputFormatting.contains(.withoutEscapingSlashes)
            date = encoder.dateEncodingStrategy
            data = encoder.dataEncodingStrategy
            nonConformingFloat = encoder.nonConformingFloatEncodingStrategy
            key = encoder.keyEncodingStrategy
            if case .useDefaultKeys = encoder.keyEncodingStrategy { convertsKeys = false } else { convertsKeys = true }
            userInfo = encoder.userInfo
        }
    }
}
