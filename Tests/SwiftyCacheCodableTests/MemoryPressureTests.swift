import Foundation
import SwiftyCacheCore
import SwiftyCacheTestSupport
import Testing

@testable import SwiftyCacheCodable

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

@Suite struct MemoryPressureTests {
    let directory = TemporaryDirectory()

    @Test func keepingAFractionDropsTheLeastRecentlyUsedAndLosesNothing() throws {
        let cache = try ObjectCache<String, Note>(
            directory: directory.url, configuration: ObjectCacheConfiguration(memoryLimit: 100))
        for index in 0..<40 { try cache.set(sampleNote, forKey: "n\(index)") }
        cache.trimMemory(.keeping(fraction: 0.25))
        #expect(cache.memoryCount == 10)
        let before = cache.statistics
        #expect(try cache.value(forKey: "n39") == sampleNote)
        #expect(try cache.value(forKey: "n0") == sampleNote)
        let after = cache.statistics
        #expect(after.memoryHits == before.memoryHits + 1)
        #expect(after.diskHits == before.diskHits + 1)
        cache.trimMemory(.warning)
        #expect(cache.memoryCount == 5)
        cache.trimMemory(.keeping(fraction: .nan))
        #expect(cache.memoryCount == 0)
        #expect(cache.count == 40)
    }

    @Test func unsavedValuesAreSavedBeforeTheyGoAndKeptWhenTheyCannotBe() throws {
        let fileSystem = FaultInjectingFileSystem()
        let cache = try ObjectCache<String, Note>(
            directory: directory.url, configuration: ObjectCacheConfiguration(memoryLimit: 100),
            fileSystem: fileSystem)
        for index in 0..<20 { cache.setUnsaved(sampleNote, forKey: "u\(index)") }
        // The disk refuses every write: nothing unsaved may go.
        fileSystem.failCalls(named: ["write", "open"], errno: EIO)
        cache.trimMemory(.critical)
        cache.trimMemory(.keeping(fraction: 0))
        #expect(cache.memoryCount == 20)
        fileSystem.heal()
        #expect(try cache.value(forKey: "u7") == sampleNote)
        cache.trimMemory(.keeping(fraction: 0.5))
        #expect(cache.memoryCount == 10)
        cache.trimMemory(.critical)
        #expect(cache.memoryCount == 0)
        #expect(cache.disk.count == 20)
        for index in 0..<20 { #expect(try cache.value(forKey: "u\(index)") == sampleNote) }
    }

    @Test func theRelayTrimsItsMembersAndLetsReleasedCachesGo() throws {
        let relay = MemoryPressureRelay()
        let cache = try ObjectCache<String, Note>(directory: directory.appending("a"))
        for index in 0..<10 { try cache.set(sampleNote, forKey: "n\(index)") }
        relay.add(cache)
        relay.relay(.warning)
        #expect(cache.memoryCount == 5)
        relay.relay(.critical)
        #expect(cache.memoryCount == 0)
        try cache.set(sampleNote, forKey: "n0")
        relay.remove(cache)
        relay.relay(.critical)
        #expect(cache.memoryCount == 1)

        weak var released: ObjectCache<String, Note>?
        do {
            let transient = try ObjectCache<String, Note>(directory: directory.appending("b"))
            relay.add(transient)
            #expect(relay.contains(transient))
            released = transient
            try transient.close()
        }
        #expect(released == nil)
        relay.relay(.critical)
    }

    @Test func cachesFollowTheSystemsEventsUnlessTold() throws {
        let following = try ObjectCache<String, Note>(directory: directory.appending("a"))
        #expect(MemoryPressureRelay.shared.contains(following))
        try following.close()
        #expect(!MemoryPressureRelay.shared.contains(following))
        var configuration = ObjectCacheConfiguration()
        configuration.trimsMemoryUnderPressure = false
        let deaf = try ObjectCache<String, Note>(directory: directory.appending("b"), configuration: configuration)
        #expect(!MemoryPressureRelay.shared.contains(deaf))
    }
}

/// Trims racing writers and readers: no unsaved value is lost, and every key ends with its
/// last value.
@Suite(.tags(.concurrency)) struct MemoryTrimRaceTests {
    let directory = TemporaryDirectory()

    struct Stamp: Codable, Sendable, Equatable {
        var writer: Int
        var round: Int
    }

    @Test func trimsRacingWritesLoseNoUnsavedValue() throws {
        let configuration = ObjectCacheConfiguration(memoryLimit: 4096)
        let cache = try ObjectCache<String, Stamp>(directory: directory.url, configuration: configuration)
        let writers = 3
        let rounds = 600
        let done = (0..<writers).map { writer in
            onNewThread {
                for round in 0..<rounds {
                    let key = "w\(writer)-\(round % 50)"
                    let stamp = Stamp(writer: writer, round: round)
                    if round % 2 == 0 {
                        cache.setUnsaved(stamp, forKey: key)
                    } else {
                        try? cache.set(stamp, forKey: key)
                    }
                    _ = try? cache.value(forKey: "w\((writer + 1) % writers)-\(round % 50)")
                }
            }
        }
        let trims: [MemoryTrim] = [.warning, .critical, .keeping(fraction: 0.1), .keeping(fraction: 0.9)]
        let trimmer = onNewThread {
            for index in 0..<200 { cache.trimMemory(trims[index % trims.count]) }
        }
        for semaphore in done + [trimmer] { semaphore.wait() }
        try cache.close()
        let reopened = try ObjectCache<String, Stamp>(directory: directory.url, configuration: configuration)
        for writer in 0..<writers {
            for slot in 0..<50 {
                let last = rounds - 50 + slot
                #expect(
                    try reopened.value(forKey: "w\(writer)-\(slot)") == Stamp(writer: writer, round: last),
                    "w\(writer)-\(slot)")
            }
        }
    }
}

extension MemoryTrimRaceTests {
    /// A trim saves its unsaved values one by one; a `set` of a later one, made while an
    /// earlier one's write is held, is on disk to stay: the trim does not write the older
    /// value over it. (File storage: a value's file is written outside the engine's lock, so
    /// the set goes on while the save's write is held.)
    @Test func aSaveNeverWritesAnOlderValueOverANewerSet() throws {
        struct Padded: Codable, Sendable, Equatable {
            var round: Int
            var padding = String(repeating: "p", count: 2_000)
        }
        let fileSystem = FaultInjectingFileSystem()
        let cache = try ObjectCache<String, Padded>(
            directory: directory.url, configuration: ObjectCacheConfiguration(memoryLimit: 100, storage: .files),
            fileSystem: fileSystem)
        // Two keys in different write stripes, so that the set does not wait for the held write.
        let first = "first"
        let second = try #require(
            (0..<200).map { "second-\($0)" }.first { candidate in
                let stripes = [first, candidate].map { key in
                    cache.stripeIndex(for: cache.keyHasher.engineKey(for: Data("s:\(key)".utf8)))
                }
                return stripes[0] != stripes[1]
            })
        cache.setUnsaved(Padded(round: 0), forKey: first)
        cache.setUnsaved(Padded(round: 1), forKey: second)
        let hold = fileSystem.holdNextWrite(largerThan: 1_000)
        let trimmer = onNewThread { cache.trimMemory(.keeping(fraction: 0)) }
        #expect(hold.waitUntilHeld())
        // The trim holds the first value's write; the second's newer value goes to disk now.
        try cache.set(Padded(round: 2), forKey: second)
        hold.release()
        trimmer.wait()
        try cache.close()
        let reopened = try ObjectCache<String, Padded>(
            directory: directory.url, configuration: ObjectCacheConfiguration(storage: .files))
        #expect(try reopened.value(forKey: second) == Padded(round: 2))
        #expect(try reopened.value(forKey: first) == Padded(round: 0))
    }
}
