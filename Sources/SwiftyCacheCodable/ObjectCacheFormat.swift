#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif

/// How an ``ObjectCache`` encodes its values: JSON or a property list, with coders you can
/// configure (date strategy, key strategy and so on). `Data` values are always stored raw.
///
/// ```swift
/// let format = ObjectCacheFormat.json { encoder, decoder in
///     encoder.dateEncodingStrategy = .iso8601
///     decoder.dateDecodingStrategy = .iso8601
/// }
/// ```
public struct ObjectCacheFormat: Sendable {
    /// The codec byte recorded in each entry's envelope.
    enum Codec: UInt8, Sendable {
        case raw = 0
        case json = 1
        case binaryPropertyList = 2
        case xmlPropertyList = 3
    }

    private enum Coders: Sendable {
        case json(JSONEncoder, JSONDecoder)
        case propertyList(PropertyListEncoder, PropertyListDecoder)
    }

    let codec: Codec
    private let coders: Coders

    /// JSON with default coders.
    public static let json = ObjectCacheFormat.json(configure: nil)

    /// JSON, with coders adjusted by `configure` once, before first use.
    ///
    /// - Parameter configure: Sets options on the encoder and decoder.
    public static func json(configure: ((JSONEncoder, JSONDecoder) -> Void)?) -> ObjectCacheFormat {
        let encoder = JSONEncoder()
        let decoder = JSONDecoder()
        configure?(encoder, decoder)
        return ObjectCacheFormat(codec: .json, coders: .json(encoder, decoder))
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

    func encode<Value: Encodable>(_ value: Value) throws -> Data {
        switch coders {
        case .json(let encoder, _): try encoder.encode(value)
        case .propertyList(let encoder, _): try encoder.encode(value)
        }
    }

    func decode<Value: Decodable>(_ type: Value.Type, from data: Data) throws -> Value {
        switch coders {
        case .json(_, let decoder): try decoder.decode(type, from: data)
        case .propertyList(_, let decoder): try decoder.decode(type, from: data)
        }
    }
}
