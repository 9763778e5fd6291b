public import SwiftyCacheCore

#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif

/// The calls into the engine: its key for a typed key, the write stripe that orders writes of
/// one key, and errors wrapped as `ObjectCacheError`.
extension ObjectCache {
    @discardableResult
    func removeFromDisk(_ key: Key, operation: ObjectCacheError.Operation) throws -> Bool {
        let engineKey = keyHasher.engineKey(for: try encodeKey(key, operation: operation))
        return try stripe(for: engineKey).lock.withLock { writes in
            writes += 1
            return try diskCall(key, operation: operation) { try disk.removeValue(forKey: engineKey) }
        }
    }

    @inlinable
    func encodeKey(_ key: Key, operation: ObjectCacheError.Operation) throws -> Data {
        do {
            return try KeyCoding.bytes(of: key)
        } catch {
            throw ObjectCacheError.encodingFailed("key", key: "\(key)", operation: operation, cause: error)
        }
    }

    /// Runs an engine call, wrapping its error with the key and operation.
    @inlinable
    func diskCall<T>(_ key: Key?, operation: ObjectCacheError.Operation, _ body: () throws -> T)
        throws(ObjectCacheError) -> T
    {
        do {
            return try body()
        } catch {
            throw reported(ObjectCacheError.wrapping(error, key: key.map { "\($0)" }, operation: operation))
        }
    }

    /// `error`, or ``ObjectCacheError/Code/unavailable`` for a refusal of protected files when
    /// the cache asked for a protection class.
    @inlinable
    func reported(_ error: ObjectCacheError) -> ObjectCacheError {
        protectsFiles && error.isPermissionDenied ? .unavailable(error) : error
    }

    @inlinable
    func stripe(for engineKey: String) -> WriteStripe {
        writeStripes[stripeIndex(for: engineKey)]
    }

    /// The index of the write stripe of `engineKey`: a multiplicative mix of its bytes, eight at a
    /// time. Not `Hasher`, whose seeded SipHash costs several times as much per key: a stripe is
    /// only a lock, so keys chosen to share one slow each other down and nothing else.
    ///
    /// - Complexity: O(key length).
    @inlinable
    func stripeIndex(for engineKey: String) -> Int {
        let mixed = engineKey.withUTF8Bytes { utf8 -> UInt64 in
            let bytes = UnsafeRawBufferPointer(utf8)
            var hash = 0x9E37_79B9_7F4A_7C15 ^ UInt64(bytes.count)
            var index = 0
            while index + 8 <= bytes.count {
                hash = (hash ^ bytes.loadUnaligned(fromByteOffset: index, as: UInt64.self)) &* 0xFF51_AFD7_ED55_8CCD
                hash ^= hash >> 29
                index += 8
            }
            while index < bytes.count {
                hash = (hash ^ UInt64(bytes[index])) &* 0x0000_0100_0000_01B3
                index += 1
            }
            return hash ^ (hash >> 32)
        }
        return Int(mixed % UInt64(writeStripes.count))
    }
}

/// One lock of the per-key write striping; its state counts the writes it serialized (a
/// zero-size state would confuse ThreadSanitizer's access tracking).
@usableFromInline
final class WriteStripe: Sendable {
    @usableFromInline let lock = LockedState<Int>(0)
}
