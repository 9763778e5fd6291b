import SwiftyCacheCore

#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif

/// Names keys by 128 bits of xxHash (two XXH64 digests with different seeds) in 32 lowercase
/// hexadecimal digits: the default for caches created since SHA-256 names were replaced, six
/// times cheaper than ``SHA256KeyHasher`` for a short key.
///
/// It is not a cryptographic hash, and need not be: the original key is stored with every value
/// and compared on every read, so two keys with one name can only make a miss, never return
/// another key's value. 128 bits make even that improbable (about 2⁻⁶⁴ for four billion keys).
public struct XXHashKeyHasher: CacheKeyHasher {
    /// The second digest's seed; the first one's is 0.
    static let secondSeed: UInt64 = 0x5357_4946_5459_4341  // "SWIFTYCA"

    /// An xxHash hasher.
    public init() {}

    /// The two digests of `keyBytes` in lowercase hexadecimal, first the one with seed 0.
    public func engineKey(for keyBytes: Data) -> String {
        let (first, second) = keyBytes.withUnsafeBytes { bytes in
            (XXHash64.hash(bytes, seed: 0), XXHash64.hash(bytes, seed: Self.secondSeed))
        }
        return String(unsafeUninitializedCapacity: 32) { text in
            guard text.count >= 32, let base = text.baseAddress else { return 0 }
            // Eight digits a store (``HexDigits/digits(of:)``).
            let words = (HexDigits.digits(of: first), HexDigits.digits(of: second))
            let raw = UnsafeMutableRawPointer(base)
            raw.storeBytes(of: words.0.0.littleEndian, toByteOffset: 0, as: UInt64.self)
            raw.storeBytes(of: words.0.1.littleEndian, toByteOffset: 8, as: UInt64.self)
            raw.storeBytes(of: words.1.0.littleEndian, toByteOffset: 16, as: UInt64.self)
            raw.storeBytes(of: words.1.1.littleEndian, toByteOffset: 24, as: UInt64.self)
            return 32
        }
    }
}
