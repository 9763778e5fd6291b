import SwiftyCacheCore

#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif

/// Canonical key bytes: equal keys encode to equal bytes (JSON with sorted keys).
@usableFromInline
enum KeyCoding {
    @usableFromInline static let encoder: JSONEncoder = {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return encoder
    }()

    static let decoder = JSONDecoder()

    @inlinable
    static func bytes<Key: Encodable>(of key: Key) throws -> Data {
        // Strings are by far the most common key: skip the encoder, and tag them so no JSON
        // collides: `s:` and the string's UTF-8, written once into the `Data`.
        if Key.self == String.self { return taggedBytes(of: reinterpret(key, as: String.self)) }
        return try encoder.encode(key)
    }

    /// `s:` followed by the UTF-8 of `string`.
    @usableFromInline
    static func taggedBytes(of string: String) -> Data {
        return string.withUTF8Bytes { utf8 in
            var data = Data(count: utf8.count + 2)
            data.withUnsafeMutableBytes { buffer in
                buffer[0] = UInt8(ascii: "s")
                buffer[1] = UInt8(ascii: ":")
                UnsafeMutableRawBufferPointer(rebasing: buffer[2...]).copyMemory(from: UnsafeRawBufferPointer(utf8))
            }
            return data
        }
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
