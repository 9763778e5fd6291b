#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif

/// How an ``ObjectCache`` encodes its values: JSON or a property list, with coders you can
/// configure (date strategy, key strategy and so on). `Data` values are always stored raw.
///
/// JSON is written and read by the built-in ``DirectJSONEncoder`` and ``DirectJSONDecoder``,
/// several times faster than Foundation's coders and standard JSON both ways: entries written
/// with Foundation's coders (by an earlier release, or with ``foundationJSON(configure:)``) read
/// back as they are, and the other way round.
///
/// One spelling per coder: ``json`` (the built-in coders, default options),
/// ``json(encoder:decoder:)`` (the built-in coders, configured), ``foundationJSON(configure:)``
/// (Foundation's coders, which alone read JSON5), ``propertyList(_:configure:)``.
///
/// ```swift
/// var encoder = DirectJSONEncoder()
/// encoder.dateEncodingStrategy = .iso8601
/// var decoder = DirectJSONDecoder()
/// decoder.dateDecodingStrategy = .iso8601
/// let format = ObjectCacheFormat.json(encoder: encoder, decoder: decoder)
/// ```
public struct ObjectCacheFormat: Sendable {
    /// The codec byte recorded in each entry's envelope.
    @usableFromInline
    enum Codec: UInt8, Sendable {
        case raw = 0
        case json = 1
        case binaryPropertyList = 2
        case xmlPropertyList = 3
    }

    private enum Coders: Sendable {
        /// The built-in coders' settings, built once.
        /// The built-in coders' settings, built once, and an encoding state kept between encodes.
        case json(DirectJSONEncoder.Options, DirectJSONDecoder.Options, JSONEncodingStateSlot)
        case foundationJSON(JSONEncoder, JSONDecoder)
        case propertyList(PropertyListEncoder, PropertyListDecoder)
    }

    @usableFromInline let codec: Codec
    private let coders: Coders

    /// JSON with the built-in coders and default options.
    public static let json = ObjectCacheFormat.json(encoder: DirectJSONEncoder(), decoder: DirectJSONDecoder())

    /// JSON with the given built-in coders.
    ///
    /// - Parameters:
    ///   - encoder: The encoder, with its options set.
    ///   - decoder: The decoder, with its options set.
    public static func json(encoder: DirectJSONEncoder, decoder: DirectJSONDecoder) -> ObjectCacheFormat {
        let coders = Coders.json(
            DirectJSONEncoder.Options(encoder), DirectJSONDecoder.Options(decoder), JSONEncodingStateSlot())
        return ObjectCacheFormat(codec: .json, coders: coders)
    }

    /// JSON with Foundation's `JSONEncoder` and `JSONDecoder`, as releases before the built-in
    /// coders wrote it. Entries are interchangeable with ``json``'s.
    ///
    /// - Parameter configure: Sets options on the encoder and decoder, once, before first use.
    public static func foundationJSON(configure: ((JSONEncoder, JSONDecoder) -> Void)? = nil) -> ObjectCacheFormat {
        let encoder = JSONEncoder()
        let decoder = JSONDecoder()
        configure?(encoder, decoder)
        return ObjectCacheFormat(codec: .json, coders: .foundationJSON(encoder, decoder))
    }

    /// A property list in the given format (`.binary` or `.xml`).
    ///
    /// - Parameters:
    ///   - format: `.binary` (compact, the default) or `.xml`.
    ///   - configure: Sets options on the encoder and decoder, once, before first use.
    public static func propertyList(
        _ format: PropertyListDecoder.PropertyListFormat = .binary,
        configure: ((PropertyListEncoder, PropertyListDecoder) -> Void)? = nil
    ) -> ObjectCacheFormat {
        let encoder = PropertyListEncoder()
        encoder.outputFormat = format == .xml ? .xml : .binary
        let decoder = PropertyListDecoder()
        configure?(encoder, decoder)
        return ObjectCacheFormat(
            codec: encoder.outputFormat == .xml ? .xmlPropertyList : .binaryPropertyList,
            coders: .propertyList(encoder, decoder))
    }

    /// Appends the encoding of `value` to `bytes` (after the entry's envelope: one buffer).
    @usableFromInline
    func encode<Value: Encodable>(_ value: Value, appendingTo bytes: inout [UInt8]) throws {
        switch coders {
        case .json(let options, _, let slot):
            try DirectJSONEncoder.encode(value, appendingTo: &bytes, options: options, reusing: slot)
        case .foundationJSON(let encoder, _): bytes.append(contentsOf: try encoder.encode(value))
        case .propertyList(let encoder, _): bytes.append(contentsOf: try encoder.encode(value))
        }
    }

    /// Decodes `bytes`, valid during the call (a slot of a packed record, where the read left
    /// it: the record is not copied into a `Data` per slot).
    ///
    /// One copy is made of the payload, into the decoder's own array (built-in JSON) or `Data`
    /// (Foundation's coders): a decoder's containers may outlive the call (a `Decodable` may
    /// keep its decoder), so they must not point into a buffer that is freed when it returns.
    @usableFromInline
    func decode<Value: Decodable>(_ type: Value.Type, fromBytes bytes: UnsafeRawBufferPointer) throws -> Value {
        switch coders {
        case .json(_, let options, _): try DirectJSONDecoder.decode(type, from: [UInt8](bytes), options: options)
        case .foundationJSON(_, let decoder): try decoder.decode(type, from: Data(bytes))
        case .propertyList(_, let decoder): try decoder.decode(type, from: Data(bytes))
        }
    }
}
