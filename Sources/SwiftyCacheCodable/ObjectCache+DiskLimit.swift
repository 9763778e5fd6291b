public import SwiftyCacheCore

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

extension ObjectCache {
    /// The keys that lowering the disk limit to `maxDiskSize` would evict, least recently used
    /// first, without evicting anything or changing the LRU order.
    ///
    /// - Complexity: O(keys returned): it reads each one's envelope.
    public func keysEvicted(atLimit maxDiskSize: Int) -> [Key] {
        disk.keysEvicted(atMaxSize: maxDiskSize).compactMap { diskKey in
            guard let snapshot = try? disk.peekSnapshot(forKey: diskKey) else { return nil }
            defer { snapshot.close() }
            guard let envelope = try? Envelope(decoding: snapshot.readData(at: 0)) else { return nil }
            return try? KeyCoding.key(Key.self, from: envelope.keyBytes)
        }
    }

    /// Changes the disk limit; a lower one evicts least recently used entries at once.
    ///
    /// - Throws: ``ObjectCacheError`` for a limit below 1, a read-only cache, or a disk failure.
    public func setMaxDiskSize(_ maxDiskSize: Int) throws {
        try diskCall(nil, operation: .setMaxDiskSize) {
            try disk.setMaxSize(maxDiskSize)
            try disk.flush()
        }
    }

    /// The disk limit in bytes.
    public var maxDiskSize: Int { disk.maxSize }

    /// What opening the disk cache found and repaired: a journal it had to reset, files it did
    /// not create and left alone.
    public var recoveryReport: RecoveryReport { disk.recoveryReport }

    /// Whether the cache was opened with ``ObjectCacheConfiguration/isReadOnly``: reads work,
    /// every write throws (`setUnsaved(_:forKey:expiresAfter:)` does nothing).
    public var isReadOnly: Bool { disk.options.isReadOnly }
}
