#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif

/// Hashes keys with SHA-256 into 64 lowercase hexadecimal digits.
public struct SHA256KeyHasher: CacheKeyHasher {
    /// A SHA-256 hasher.
    public init() {}

    /// The SHA-256 digest of `keyBytes` in lowercase hexadecimal.
    public func engineKey(for keyBytes: Data) -> String {
        SHA256.hexDigest(keyBytes)
    }
}
