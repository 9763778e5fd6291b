import Foundation
import SwiftyCacheCodable
import SwiftyCacheCore
import SwiftyCacheTestSupport
import Testing

/// `ObjectCache.changes()` and `values(forKey:)`: typed changes of every kind, by key, in
/// order; memory-only sets counted the moment they are made; evictions by key.
@Suite(.tags(.concurrency)) struct ObjectCacheChangesTests {
    let directory = TemporaryDirectory()

    @Test func everyKindOfChangeByKeyInOrder() async throws {
        let clock = TestClock()
        let cache = try ObjectCache<String, String>(
            directory: directory.url, configuration: .init(clock: clock.function))
        let changes = cache.changes()
        try await cache.set("1", forKey: "a")
        cache.setUnsaved("2", forKey: "b")  // memory only, unsaved: a change now
        try await cache.removeValue(forKey: "a")
        try await cache.set("3", forKey: "c", expiresAfter: .seconds(10))
        #expect(
            await collect(3, from: changes) == [
                ObjectCacheChange(key: "b", kind: .set), ObjectCacheChange(key: "a", kind: .removed),
                ObjectCacheChange(key: "c", kind: .set),
            ])
        clock.advance(by: 20)
        #expect(try await cache.value(forKey: "c") == nil)
        #expect(await collect(1, from: changes) == [ObjectCacheChange(key: "c", kind: .expired)])
        try await cache.removeAll()
        #expect(await collect(1, from: changes) == [ObjectCacheChange(key: nil, kind: .cleared)])
    }

    @Test func evictionsComeByKey() async throws {
        // About 70 bytes an entry on disk (envelope and value), a limit of 400: the oldest go.
        let cache = try ObjectCache<String, String>(
            directory: directory.url, configuration: .init(maxDiskSize: 400, memoryLimit: 0))
        let changes = cache.changes()
        for index in 0..<10 { try await cache.set(String(repeating: "v", count: 20), forKey: "key-\(index)") }
        let received = await collect(10, from: changes)
        let evicted = received.filter { $0.kind == .evicted }
        #expect(!evicted.isEmpty)
        #expect(evicted.allSatisfy { $0.key?.hasPrefix("key-") == true })
        for change in evicted { #expect(try await cache.value(forKey: change.key ?? "") == nil) }
    }

    @Test func valuesOfAKeyFollowItThroughMemoryAndDisk() async throws {
        let cache = try ObjectCache<String, String>(directory: directory.url)
        try await cache.set("first", forKey: "k")
        let values = cache.values(forKey: "k")
        // Checked in a task that a watchdog cancels after 120 seconds: a value that never comes
        // ends the iteration (`nil`) and fails the expectations instead of hanging the test.
        let check = Task {
            var iterator = values.makeAsyncIterator()
            var seen: [String??] = []
            seen.append(await iterator.next())
            cache.setUnsaved("in memory", forKey: "k")
            seen.append(await iterator.next())
            try? setNow(cache, "on disk", forKey: "k")
            try? setNow(cache, "other key", forKey: "unrelated")
            seen.append(await iterator.next())
            _ = try? removeNow(cache, forKey: "k")
            seen.append(await iterator.next())
            try? await cache.close()
            seen.append(await iterator.next())
            return seen
        }
        let seen = await Watchdog.boundedValue(of: check)
        #expect(seen == [.some("first"), .some("in memory"), .some("on disk"), .some(nil), nil])
    }

    @Test func aConsumerThatCallsTheCacheInItsLoopDoesNotDeadlock() async throws {
        let cache = try ObjectCache<String, String>(directory: directory.url, configuration: .init(memoryLimit: 10))
        let changes = cache.changes()
        let consumer = Task {
            var reads = 0
            for await change in changes {
                // Echoes are not echoed again: a consumer that fed itself would never wait
                // for a change, and under load would keep a cooperative thread from the writer.
                guard let key = change.key, change.kind == .set, !key.hasPrefix("echo-") else { continue }
                if key == "k99" { break }
                if (try? await cache.value(forKey: key)) != nil { reads += 1 }
                cache.setUnsaved(key, forKey: "echo-\(key)")
            }
            return reads
        }
        let watchdog = Watchdog.start { consumer.cancel() }
        for index in 0..<100 { try await cache.set("\(index)", forKey: "k\(index)") }
        #expect(await consumer.value > 0)
        watchdog.cancel()
    }

    /// A read-only cache beside a writer (here in this process; the engine's test uses another
    /// one) follows the writer's journal: a key's values arrive as the writer sets them.
    @Test func aReadOnlyCacheFollowsAWritersValues() async throws {
        let writer = try ObjectCache<String, String>(directory: directory.url)
        try await writer.set("one", forKey: "k")
        let reader = try ObjectCache<String, String>(directory: directory.url, configuration: .init(isReadOnly: true))
        let values = reader.values(forKey: "k")
        let check = Task {
            var iterator = values.makeAsyncIterator()
            var seen: [String??] = [await iterator.next()]
            try? setNow(writer, "two", forKey: "k")
            seen.append(await iterator.next())
            _ = try? removeNow(writer, forKey: "k")
            seen.append(await iterator.next())
            return seen
        }
        let seen = await Watchdog.boundedValue(of: check)
        #expect(seen == [.some("one"), .some("two"), .some(nil)])
    }

    /// A read-only cache names the keys of the writer's changes though it never read them:
    /// a set's key from the entry's envelope, a removal's from the record the entry had (in
    /// packed storage; in file storage the removed files are gone, so only a key this
    /// process saw set is named).
    @Test(arguments: [DiskLRUCache.Storage.packed, .files])
    func aReadOnlyCacheNamesTheKeysOfChangesItNeverRead(storage: DiskLRUCache.Storage) async throws {
        var configuration = ObjectCacheConfiguration(storage: storage)
        let writer = try ObjectCache<String, String>(directory: directory.url, configuration: configuration)
        try await writer.set("before", forKey: "old")
        try await writer.set("before", forKey: "older")
        configuration.isReadOnly = true
        let reader = try ObjectCache<String, String>(directory: directory.url, configuration: configuration)
        let changes = reader.changes()
        let check = Task {
            var iterator = changes.makeAsyncIterator()
            var seen: [ObjectCacheChange<String>?] = []
            try? setNow(writer, "v", forKey: "new")
            seen.append(await iterator.next())
            _ = try? removeNow(writer, forKey: "new")
            seen.append(await iterator.next())
            _ = try? removeNow(writer, forKey: "old")
            seen.append(await iterator.next())
            return seen
        }
        let seen = await Watchdog.boundedValue(of: check)
        #expect(
            seen == [
                ObjectCacheChange(key: "new", kind: .set), ObjectCacheChange(key: "new", kind: .removed),
                ObjectCacheChange(key: storage == .packed ? "old" : nil, kind: .removed),
            ])
        // Nothing was read: the reader's memory and statistics are as they were.
        #expect(reader.statistics.memoryHits == 0 && reader.statistics.diskHits == 0)
        try await reader.close()
        try await writer.close()
    }

    @Test func cancellingTheTaskEndsTheSubscription() async throws {
        let cache = try ObjectCache<String, String>(directory: directory.url)
        let values = cache.values(forKey: "k")
        let consumer = Task {
            var seen = 0
            for await _ in values { seen += 1 }
            return seen
        }
        consumer.cancel()
        let seen = await consumer.value
        #expect(seen <= 1)
    }
}

/// A set made on the calling thread, not offloaded to the I/O pool as the `async` overload in an
/// `async` test would be: the tests that wait for its change do not wait for a pool thread that
/// other tests, running beside them, may hold.
func setNow(_ cache: ObjectCache<String, String>, _ value: String, forKey key: String) throws {
    try cache.set(value, forKey: key)
}

/// A removal made on the calling thread (see ``setNow(_:_:forKey:)``).
func removeNow(_ cache: ObjectCache<String, String>, forKey key: String) throws -> Bool {
    try cache.removeValue(forKey: key)
}
