#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Canonical key bytes: equal keys encode to equal bytes (JSON with sorted keys).
enum KeyCoding {
    static let encoder: JSONEncoder = {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return encoder
    }()

    static let decoder = JSONDecoder()

    static func bytes<Key: Encodable>(of key: Key) throws -> Data {
        // Strings are by far the most common key: skip the encoder, keep the same bytes it
        // would produce for the common case of plain text, and tag them so no JSON collides.
        if let string = key as? String { return Data(("s:" + string).utf8) }
        return try encoder.encode(key)
    }

    static func key<Key: Decodable>(_ type: Key.Type, from bytes: Data) throws -> Key {
        if Key.self == String.self, bytes.starts(with: Data("s:".utf8)),
            let key = String(decoding: bytes.dropFirst(2), as: UTF8.self) as? Key
        {
            return key
        }
        return try decoder.decode(type, from: bytes)
    }
}
