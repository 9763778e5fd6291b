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

    /// The index of the write stripe of `engineKey`.
    @inlinable
    func stripeIndex(for engineKey: String) -> Int {
        var hasher = Hasher()
        hasher.combine(engineKey)
        return Int(UInt(bitPattern: hasher.finalize()) % UInt(writeStripes.count))
    }
}

/// One lock of the per-key write striping; its state counts the writes it serialized (a
/// zero-size state would confuse ThreadSanitizer's access tracking).
@usableFromInline
final class WriteStripe: Sendable {
    @usableFromInline let lock = LockedState<Int>(0)
}
