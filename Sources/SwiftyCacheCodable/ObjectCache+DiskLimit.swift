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
    /// - Complexity: O(n): it walks the entries on disk and reads each one's envelope.
    public func keysEvicted(atLimit maxDiskSize: Int) -> [Key] {
        var excess = disk.size - maxDiskSize
        guard excess > 0 else { return [] }
        var result: [Key] = []
        let snapshots = (try? disk.snapshots()).map(Array.init) ?? []
        for snapshot in snapshots where excess > 0 {
            defer { snapshot.close() }
            excess -= snapshot.lengths.reduce(0, +)
            if let envelope = try? Envelope(decoding: snapshot.readData(at: 0)),
                let key = try? KeyCoding.key(Key.self, from: envelope.keyBytes)
            {
                result.append(key)
            }
        }
        return result
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
