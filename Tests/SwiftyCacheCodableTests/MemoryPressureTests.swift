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
