import Foundation
import SwiftyCacheCodable
import SwiftyCacheCore
import SwiftyCacheTestSupport
import Testing

@Suite struct WarmStartTests {
    let directory = TemporaryDirectory()

    func open(warmStartCount: Int, memoryLimit: Int = 200) throws -> ObjectCache<String, Note> {
        try ObjectCache(
            directory: directory.url,
            configuration: ObjectCacheConfiguration(memoryLimit: memoryLimit, warmStartCount: warmStartCount))
    }

    @Test func aCleanCloseRecordsTheHotKeysAndTheNextOpenLoadsThem() async throws {
        do {
            let cache = try open(warmStartCount: 50)
            for index in 0..<300 { try await cache.set(sampleNote, forKey: "n\(index)") }
            // Read back from disk: the newest in memory.
            for index in 0..<20 { _ = try await cache.value(forKey: "n\(index)") }
            try await cache.close()
        }
        let cache = try open(warmStartCount: 50)
        await cache.waitUntilWarm()
        #expect(cache.memoryCount == 50)
        let before = cache.statistics
        for index in 0..<20 { #expect(try await cache.value(forKey: "n\(index)") == sampleNote) }
        #expect(try await cache.value(forKey: "n299") == sampleNote)
        let after = cache.statistics
        #expect(after.memoryHits - before.memoryHits == 21)
        #expect(after.diskHits == before.diskHits)
    }

    @Test func valuesReadFromMemoryComeBeforeNewerOnesNotRead() async throws {
        do {
            let cache = try open(warmStartCount: 10)
            for index in 0..<100 { try await cache.set(sampleNote, forKey: "n\(index)") }
            // Hits on old values: the record prefers them to the 90 stored after them.
            for index in 0..<10 { _ = try await cache.value(forKey: "n\(index)") }
            #expect(cache.statistics.memoryHits == 10)
            try await cache.close()
        }
        let cache = try open(warmStartCount: 10)
        await cache.waitUntilWarm()
        #expect(cache.memoryCount == 10)
        for index in 0..<10 { #expect(try await cache.value(forKey: "n\(index)") == sampleNote) }
        #expect(cache.statistics.memoryHits == 10)
    }

    @Test func aSecondCloseKeepsTheRecord() async throws {
        do {
            let cache = try open(warmStartCount: 10)
            for index in 0..<10 { try await cache.set(sampleNote, forKey: "n\(index)") }
            try await cache.close()
            try? await cache.close()  // a second close, whatever it answers
        }
        let cache = try open(warmStartCount: 10)
        await cache.waitUntilWarm()
        #expect(cache.memoryCount == 10)
    }

    @Test func withoutTheOptionNothingIsRecordedOrLoaded() async throws {
        do {
            let cache = try open(warmStartCount: 0)
            for index in 0..<30 { try await cache.set(sampleNote, forKey: "n\(index)") }
            try await cache.close()
        }
        #expect(!FileManager.default.fileExists(atPath: directory.appending("objectcache-warm").path))
        let cache = try open(warmStartCount: 0)
        await cache.waitUntilWarm()
        #expect(cache.memoryCount == 0)
    }

    @Test func aDamagedRecordLoadsNothingAndGoneEntriesAreSkipped() async throws {
        do {
            let cache = try open(warmStartCount: 10)
            for index in 0..<10 { try await cache.set(sampleNote, forKey: "n\(index)") }
            try await cache.close()
        }
        let record = directory.appending("objectcache-warm")
        let recorded = try Data(contentsOf: record)
        // Entries removed since the record was written are skipped.
        do {
            let cache = try open(warmStartCount: 0)
            for index in 0..<4 { try await cache.removeValue(forKey: "n\(index)") }
            try await cache.close()
        }
        do {
            let cache = try open(warmStartCount: 10)
            await cache.waitUntilWarm()
            #expect(cache.memoryCount == 6)
            #expect(try await cache.value(forKey: "n1") == nil)
            try await cache.close()
        }
        // A flipped byte, a truncation, or garbage: nothing is loaded, nothing fails.
        var flipped = recorded
        flipped[flipped.count / 2] ^= 0x40
        for damaged in [flipped, recorded.prefix(recorded.count - 3), Data(repeating: 0xFF, count: 64)] {
            try damaged.write(to: record)
            let cache = try open(warmStartCount: 10)
            await cache.waitUntilWarm()
            #expect(cache.memoryCount == 0)
            #expect(try await cache.value(forKey: "n9") == sampleNote)
            try await cache.close()
        }
    }
}
