import Dispatch
import Foundation
import SwiftyCacheCore
import SwiftyCacheTestSupport
import Testing

/// `DiskLRUCache.changes()`: every kind of change, in commit order, coalesced for a consumer
/// that falls behind, delivered with the cache's lock released, ended by cancellation and by
/// closing; in both storages.
@Suite(.tags(.concurrency)) struct CacheChangesTests {
    let directory = TemporaryDirectory()

    @Test(arguments: bothStorages)
    func everyKindInCommitOrderForAConsumerThatWaitedNothing(storage: DiskLRUCache.Storage) async throws {
        let cache = try openCache(directory.url, maxSize: 1_000, storage: storage)
        let changes = cache.changes()
        // Nothing is consumed until all is done: each key's latest change, in commit order.
        try cache.set("a", "1", "1")
        try cache.set("b", "2", "2")
        _ = try await cache.removeValue(forKey: "a")
        try cache.set("c", "3", "3")
        #expect(
            await collect(3, from: changes) == [
                CacheChange(key: "b", kind: .committed), CacheChange(key: "a", kind: .removed),
                CacheChange(key: "c", kind: .committed),
            ])
        // Evictions: 600 bytes a value pair, a limit of 1,000: the second one evicts every
        // other entry, least recently used first, after its own commit.
        try cache.set("big1", String(repeating: "x", count: 300), String(repeating: "y", count: 300))
        #expect(await collect(1, from: changes) == [CacheChange(key: "big1", kind: .committed)])
        try cache.set("big2", String(repeating: "x", count: 300), String(repeating: "y", count: 300))
        #expect(
            await collect(4, from: changes) == [
                CacheChange(key: "big2", kind: .committed), CacheChange(key: "b", kind: .evicted),
                CacheChange(key: "c", kind: .evicted), CacheChange(key: "big1", kind: .evicted),
            ])
        try await cache.evictAll()
        #expect(await collect(1, from: changes) == [CacheChange(key: nil, kind: .cleared)])
    }

    @Test(arguments: bothStorages)
    func theFinalStateOfEveryKeyIsDeliveredUnderConcurrentWriters(storage: DiskLRUCache.Storage) async throws {
        let cache = try openCache(directory.url, storage: storage)
        let changes = cache.changes()
        let consumer = Task {
            var last: [String: CacheChange.Kind] = [:]
            for await change in changes {
                guard let key = change.key else { continue }
                if key == "done" { break }
                last[key] = change.kind
            }
            return last
        }
        await offPool {
            DispatchQueue.concurrentPerform(iterations: 4) { writer in
                for step in 0..<500 {
                    let key = "k\((writer * 31 + step) % 40)"
                    if step % 5 == 4 {
                        _ = try? cache.removeValue(forKey: key)
                    } else {
                        try? cache.set(key, "\(writer)", "\(step)")
                    }
                }
            }
        }
        try cache.set("done", "", "")
        let delivered = await Watchdog.boundedValue(of: consumer)
        for index in 0..<40 {
            let key = "k\(index)"
            let exists = try await cache.data(forKey: key) != nil
            #expect(delivered[key] == (exists ? .committed : .removed), "\(key)")
        }
    }

    @Test func aStalledConsumerCostsAFixedBoundOfMemory() throws {
        let cache = try openCache(directory.url, storage: .packed)
        let changes = cache.changes(bufferingKeys: 50)
        for step in 0..<20_000 { try cache.set("k\(step % 40)", "\(step)", "") }
        let held = try #require(changes.subscription.hub.bufferedCount(of: changes.subscription.id))
        #expect(held.keys == 40 && held.stored <= 2 * 40 + 1)
        for step in 0..<100 { try cache.set("other\(step)", "", "") }
        let overflowed = try #require(changes.subscription.hub.bufferedCount(of: changes.subscription.id))
        #expect(overflowed.keys <= 50 && overflowed.stored <= 2 * 50 + 1)
    }

    @Test func aConsumerThatCallsTheCacheInItsLoopDoesNotDeadlock() async throws {
        let cache = try openCache(directory.url, storage: .packed)
        let changes = cache.changes()
        let consumer = Task {
            var read = 0
            for await change in changes {
                guard let key = change.key, change.kind == .committed else { continue }
                if key == "k199" { break }
                // Back into the cache from the consumer: a read, and a write of another key.
                if (try? cache.strings(key)) != nil { read += 1 }
                try? cache.set("echo-\(key)", "", "")
            }
            return read
        }
        for step in 0..<200 { try cache.set("k\(step)", "\(step)", "") }
        #expect(await Watchdog.boundedValue(of: consumer) > 0)
    }

    @Test func cancellingTheConsumingTaskEndsTheSubscriptionAtOnce() async throws {
        let cache = try openCache(directory.url, storage: .packed)
        let hub = cache.changes().subscription.hub
        let changes = cache.changes()
        #expect(hub.isObserved)
        let started = AsyncStream<Void>.makeStream()
        let consumer = Task {
            started.continuation.yield()
            var count = 0
            for await _ in changes { count += 1 }
            return count
        }
        for await _ in started.stream { break }
        consumer.cancel()
        _ = await consumer.value
        // The task ended; the sequence it held is released with it.
        try cache.set("after", "", "")
        #expect(hub.bufferedCount(of: changes.subscription.id) == nil)
    }

    @Test func closingTheCacheEndsTheSequenceAfterWhatWaits() async throws {
        let cache = try openCache(directory.url, storage: .packed)
        let changes = cache.changes()
        try cache.set("a", "", "")
        try await cache.close()
        var received: [CacheChange] = []
        for await change in changes { received.append(change) }
        #expect(received == [CacheChange(key: "a", kind: .committed)])
    }

    /// Subscribers come and go (some consume a little, some are cancelled waiting, some are
    /// dropped unread) while writers commit: for ThreadSanitizer, and for the hub's bookkeeping.
    @Test func subscribersComeAndGoWhileWritersCommit() async throws {
        let cache = try openCache(directory.url, storage: .packed)
        let hub = cache.changes().subscription.hub
        // Writers commit until every subscriber is done, so a consumer waiting for changes
        // always gets them.
        let done = LockedState(false)
        let writers = Task {
            await offPool {
                DispatchQueue.concurrentPerform(iterations: 2) { writer in
                    var step = 0
                    while !done.withLock({ $0 }) {
                        try? cache.set("w\(writer)-\(step % 17)", "\(step)", "")
                        step += 1
                    }
                }
            }
        }
        await withTaskGroup(of: Void.self) { group in
            for round in 0..<30 {
                group.addTask {
                    let changes = cache.changes(bufferingKeys: 8)
                    switch round % 3 {
                    case 0:
                        var taken = 0
                        for await _ in changes {
                            taken += 1
                            if taken == 3 { break }
                        }
                    case 1:
                        let consumer = Task { for await _ in changes {} }
                        consumer.cancel()
                        await consumer.value
                    default:
                        _ = changes  // dropped unread
                    }
                }
            }
        }
        done.withLock { $0 = true }
        await writers.value
        try cache.set("last", "", "")
        // Every subscription above has ended: none is left recording.
        #expect(!hub.isObserved)
    }

    @Test func withoutSubscribersNothingIsRecorded() throws {
        let cache = try openCache(directory.url, storage: .packed)
        let hub = cache.changes().subscription.hub  // subscribed and dropped at once
        #expect(!hub.isObserved)
        try cache.set("a", "", "")
        #expect(!hub.isObserved)
    }
}
