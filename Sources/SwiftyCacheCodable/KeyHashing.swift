#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif

/// Turns a key's canonical bytes into a name the disk engine accepts (`[a-z0-9_-]{1,120}`).
///
/// The default, ``SHA256KeyHasher``, is right for real use. Tests inject a weaker one to force
/// collisions; a collision is always detected, because the original key is stored with the
/// value and compared on every read.
public protocol CacheKeyHasher: Sendable {
    /// A valid engine key for `keyBytes`; equal inputs must give equal outputs.
    func engineKey(for keyBytes: Data) -> String
}

/// Hashes keys with SHA-256 into 64 lowercase hexadecimal digits.
public struct SHA256KeyHasher: CacheKeyHasher {
    public init() {}

    public func engineKey(for keyBytes: Data) -> String {
        SHA256.hexDigest(keyBytes)
    }
}

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
