#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif

/// Turns a key's canonical bytes into a name the disk engine accepts (`[a-z0-9_-]{1,120}`).
///
/// A new cache names its entries with ``XXHashKeyHasher``; a directory an earlier release wrote
/// keeps ``SHA256KeyHasher`` (the directory records which). Tests inject a weaker one to force
/// collisions; a collision is always detected, because the original key is stored with the
/// value and compared on every read.
public protocol CacheKeyHasher: Sendable {
    /// A valid engine key for `keyBytes`; equal inputs must give equal outputs.
    func engineKey(for keyBytes: Data) -> String
}
