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
        let task = Task.detached(priority: .utility) { [self] in await self.preload(keys) }
        warmStart.withLock { $0 = task }
    }

    /// Records the keys in memory, most recently used first, for the next open's warm start.
    /// The stripes keep their own orders: their newest keys are taken in turn, so the record
    /// holds about the `warmStartCount` most recently used.
    ///
    /// - Complexity: O(values in memory).
    func recordWarmKeys() {
        guard warmStartCount > 0, !isReadOnly else { return }
        let orders = memory.stripes.map { stripe in
            stripe.inspect { tier in tier.items.indicesInLRUOrder.reversed().compactMap { tier.items.key(at: $0) } }
        }
        var keys: [Data] = []
        var depth = 0
        while keys.count < warmStartCount, orders.contains(where: { $0.count > depth }) {
            for order in orders where depth < order.count && keys.count < warmStartCount {
                if let bytes = try? KeyCoding.bytes(of: order[depth]) { keys.append(bytes) }
            }
            depth += 1
        }
        WarmStartRecord.write(keys, in: disk.directory, fileSystem: disk.fileSystem)
    }
}
