import Dispatch
import Foundation
import SwiftyCacheCore
import SwiftyCacheTestSupport
import Synchronization
import Testing

@Suite(.tags(.concurrency)) struct ConcurrentReadOrderTests {
    let directory = TemporaryDirectory()

    /// Entries read by several threads at once become the most recently used: eviction takes
    /// every entry that was not read, oldest first, before any that was.
    @Test(arguments: bothStorages) func evictionAfterConcurrentReadsTakesTheUnreadEntriesFirst(
        storage: DiskLRUCache.Storage
    ) throws {
        let count = 64
        let entrySize = 4  // "vNN" and "x" per entry
        let cache = try openCache(directory.url, maxSize: count * entrySize, storage: storage)
        for i in 0..<count { try cache.set("k\(i)", String(format: "v%02d", i), "x") }
        // Four threads read the odd keys, each a distinct quarter of them, all at once.
        let read = (0..<count).filter { $0 % 2 == 1 }
        DispatchQueue.concurrentPerform(iterations: 4) { worker in
            for i in read where (i / 2) % 4 == worker { _ = try? cache.data(forKey: "k\(i)") }
        }
        #expect(cache.statistics.hitCount == read.count)
        // Room for the new entries takes the unread (even) keys, oldest first.
        let added = count / 4
        for i in 0..<added { try cache.set("new\(i)", String(format: "n%02d", i), "x") }
        try cache.flush()
        let evicted = (0..<count).filter { (try? cache.containsValue(forKey: "k\($0)")) != true }
        #expect(evicted == Array(stride(from: 0, to: added * 2, by: 2)))
        #expect(read.allSatisfy { (try? cache.containsValue(forKey: "k\($0)")) == true })
    }
}
