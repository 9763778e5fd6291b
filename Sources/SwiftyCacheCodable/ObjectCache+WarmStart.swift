import SwiftyCacheCore

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The warm start: the most recently used keys recorded at a clean close, loaded into memory
/// in the background at the next open (``ObjectCacheConfiguration/warmStartCount``).
extension ObjectCache {
    /// Waits until the warm start's background load has finished; returns at once when there
    /// is none (``ObjectCacheConfiguration/warmStartCount`` is 0, or nothing was recorded).
    /// Reads never need to wait: before the load reaches a key, its read goes to disk as usual.
    public func waitUntilWarm() async {
        await warmStart.withLock { $0 }?.value
    }

    /// Starts loading the recorded keys, when the configuration asks for a warm start.
    func startWarmStart() {
        guard warmStartCount > 0, !memory.keepsNothing else { return }
        let keys = WarmStartRecord.read(in: disk.directory, limit: warmStartCount, fileSystem: disk.fileSystem)
            .compactMap { try? KeyCoding.key(Key.self, from: $0) }
        guard !keys.isEmpty else { return }
        // One hop to an I/O thread for the whole list, read in order there: a hop per key (as
        // `preload` makes) cost the load twice the time of the reads it saves.
        let task = Task.detached(priority: .utility) { [self] in
            _ = try? await DiskLRUCache.offload {
                for key in keys where !self.memory.inspect(for: key, { $0.contains(key) }) {
                    try? self.loadIntoMemory(key)
                }
            }
        }
        warmStart.withLock { $0 = task }
    }

    /// Records the keys in memory, most recently used first, for the next open's warm start:
    /// values read since eviction last passed them first, then the others, each group newest
    /// stored first (a hit does not move a value; see ``MemoryTier``).
    ///
    /// - Complexity: O(n log n) in the values in memory.
    func recordWarmKeys() {
        guard warmStartCount > 0, !isReadOnly else { return }
        let recency = memory.flatMap { $0.recency() }.sorted {
            $0.isReferenced != $1.isReferenced ? $0.isReferenced : $0.version > $1.version
        }
        let keys = recency.prefix(warmStartCount).compactMap { try? KeyCoding.bytes(of: $0.key) }
        // An empty memory (a second close, after the first emptied it) keeps the last record.
        guard !keys.isEmpty else { return }
        WarmStartRecord.write(keys, in: disk.directory, fileSystem: disk.fileSystem)
    }
}
