import Foundation
import SwiftyCacheCodable
import SwiftyCacheCore
import SwiftyCacheTestSupport
import Testing

/// `ObjectCache`'s `async` read: from memory, or from a packed record in the page cache on the
/// caller's task, or the full read on the I/O pool, with the same results and effects as the
/// synchronous read.
@Suite(.tags(.concurrency, .lockFreeReads)) struct AsyncReadTests {
    let directory = TemporaryDirectory()

    @Test func aValueOnDiskIsReadCountedAndKeptInMemory() async throws {
        let cache = try ObjectCache<String, String>(directory: directory.url, configuration: .init(memoryLimit: 10))
        try await cache.set("v", forKey: "k")
        cache.clearMemory()
        #expect(try await cache.value(forKey: "k") == "v")
        #expect(cache.statistics.diskHits == 1)
        #expect(cache.memoryCount == 1)
        #expect(try await cache.value(forKey: "k") == "v")
        #expect(cache.statistics.memoryHits == 1)
        #expect(try await cache.value(forKey: "absent") == nil)
        #expect(cache.statistics.misses == 1)
    }

    @Test func anExpiredEntryReadAsynchronouslyIsAMissAndRemovedFromDisk() async throws {
        let clock = TestClock()
        let cache = try ObjectCache<String, String>(
            directory: directory.url, configuration: .init(memoryLimit: 0, clock: clock.function))
        try await cache.set("short", forKey: "a", expiresAfter: .seconds(60))
        try await cache.set("long", forKey: "b", expiresAfter: .seconds(3600))
        clock.advance(by: 61)
        #expect(try await cache.value(forKey: "a") == nil)
        #expect(try await cache.value(forKey: "b") == "long")
        #expect(try await cache.keys() == ["b"])
        #expect(cache.statistics.expirations == 1)
    }

    @Test func aValueExpiredInMemoryCountsOneExpirationReadEitherWay() async throws {
        let clock = TestClock()
        let cache = try ObjectCache<String, String>(
            directory: directory.url, configuration: .init(memoryLimit: 10, clock: clock.function))
        try await cache.set("one", forKey: "a", expiresAfter: .seconds(60))
        try await cache.set("two", forKey: "b", expiresAfter: .seconds(60))
        #expect(cache.memoryCount == 2)  // in memory and on disk
        clock.advance(by: 61)
        #expect(try await cache.value(forKey: "a") == nil)
        #expect(cache.statistics.expirations == 1)
        #expect(cache.statistics.misses == 1)
        let readSynchronously: () throws -> String? = { try cache.value(forKey: "b") }
        #expect(try readSynchronously() == nil)  // the synchronous read: the same counts
        #expect(cache.statistics.expirations == 2)
        #expect(cache.statistics.misses == 2)
        #expect(cache.memoryCount == 0)
        #expect(try await cache.keys().isEmpty)
    }

    @Test func anUnsavedValueGivenUpForALoadedOneIsSavedFirst() async throws {
        let cache = try ObjectCache<String, String>(directory: directory.url, configuration: .init(memoryLimit: 1))
        try await cache.set("on disk", forKey: "b")
        cache.clearMemory()
        cache.setUnsaved("unsaved", forKey: "a")  // memory only
        let savesBefore = cache.statistics.saves
        #expect(try await cache.value(forKey: "b") == "on disk")  // takes a's place in memory
        #expect(cache.statistics.saves == savesBefore + 1)
        cache.clearMemory()
        #expect(try await cache.value(forKey: "a") == "unsaved")
    }
}
