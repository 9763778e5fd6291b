import Foundation
import SwiftyCacheCodable
import SwiftyCacheCore
import SwiftyCacheTestSupport
import Testing

/// `ObjectCacheConfiguration`: every setting reaches the cache, and storage means what it says.
@Suite struct ObjectCacheConfigurationTests {
    let directory = TemporaryDirectory()

    @Test func theDefaultsAreThoseTheDocumentationStates() {
        let configuration = ObjectCacheConfiguration()
        #expect(configuration.maxDiskSize == 50 << 20)
        #expect(configuration.memoryLimit == 100)
        #expect(configuration.memoryByteLimit == nil)
        #expect(configuration.storage == .packed)
        #expect(!configuration.syncsWrites)
        #expect(!configuration.isReadOnly)
        #expect(configuration.schemaVersion == 1)
        #expect(configuration.defaultTimeToLive == nil)
        #expect(configuration.keyHasher == nil)
    }

    @Test func theDefaultClockIsTheWallClockToWithinATick() {
        let clock = ObjectCacheConfiguration().clock
        for _ in 0..<100 {
            let before = Date()
            let now = clock()
            let after = Date()
            // A coarse read is the time at the kernel's last tick: behind a precise read by at
            // most one tick (4 ms at 250 Hz, 10 ms at 100 Hz), never ahead of one taken later.
            #expect(now.timeIntervalSince(before) > -0.02)
            #expect(now.timeIntervalSince(after) <= 0.000_001)
        }
    }

    @Test func everySettingReachesTheCache() throws {
        let clock = TestClock()
        let configuration = ObjectCacheConfiguration(
            maxDiskSize: 1 << 20, memoryLimit: 7, format: .propertyList(.xml), schemaVersion: 3,
            defaultTimeToLive: .seconds(5), syncsWrites: true, keyHasher: SHA256KeyHasher(), clock: clock.function)
        let cache = try ObjectCache<String, [String]>(directory: directory.url, configuration: configuration)
        #expect(cache.maxDiskSize == 1 << 20)
        #expect(cache.defaultTimeToLive == .seconds(5))
        #expect(cache.disk.appVersion == 3)
        #expect(cache.disk.options.syncsWrites)
        #expect(cache.disk.options.storage == .packed)
        #expect(cache.keyHasher is SHA256KeyHasher)
        for index in 0..<20 { try cache.set(["v\(index)"], forKey: "k\(index)") }
        #expect(cache.memoryCount == 7)
        #expect(try cache.value(forKey: "k3") == ["v3"])
        #expect(try engineSlot(1, of: "s:k3", in: cache).starts(with: Data("<?xml".utf8)))
        clock.advance(by: 6)
        #expect(try cache.value(forKey: "k19") == nil)  // the default time-to-live, by the injected clock
        try cache.close()
    }

    @Test func fileStorageKeepsTheJavaLayoutAndConvertsNothing() throws {
        let files = try ObjectCache<String, String>(directory: directory.url, configuration: .init(storage: .files))
        try files.set("one", forKey: "a")
        try files.close()
        // Packed, the default, converts the directory an earlier release wrote in file storage.
        let packed = try ObjectCache<String, String>(directory: directory.url)
        #expect(packed.recoveryReport.migratedFromFileStorage)
        #expect(try packed.value(forKey: "a") == "one")
        try packed.close()
        // A converted directory opened with file storage is refused, untouched.
        #expect {
            _ = try ObjectCache<String, String>(directory: directory.url, configuration: .init(storage: .files))
        } throws: { error in
            ((error as? ObjectCacheError)?.cause as? CacheError)?.code == .storageMismatch
        }
        let again = try ObjectCache<String, String>(directory: directory.url)
        #expect(try again.value(forKey: "a") == "one")
        try again.close()
    }

    @Test func aReadOnlyConfigurationWritesNothing() throws {
        let writer = try ObjectCache<String, String>(directory: directory.url)
        try writer.set("one", forKey: "a")
        let reader = try ObjectCache<String, String>(
            directory: directory.url, configuration: .init(isReadOnly: true))
        #expect(reader.isReadOnly)
        #expect(try reader.value(forKey: "a") == "one")
        #expect {
            try reader.set("two", forKey: "a")
        } throws: { error in
            (error as? ObjectCacheError)?.code == .readOnly
                || ((error as? ObjectCacheError)?.cause as? CacheError)?.code == .readOnly
        }
        reader.setUnsaved("ignored", forKey: "b")
        #expect(!reader.hasUnsavedValue(forKey: "b"))
        try reader.close()
        try writer.close()
    }

    @Test func aReadOnlyStoreOpensEveryNamespaceReadOnlyWhateverItsConfigurationSays() throws {
        let writer = CacheStore(directory: directory.url)
        try writer.objects("notes", of: String.self).set("one", forKey: "a")
        let reader = CacheStore(directory: directory.url, readOnly: true)
        let notes = try reader.objects("notes", of: String.self, configuration: .init(isReadOnly: false))
        #expect(notes.isReadOnly)
        #expect(try notes.value(forKey: "a") == "one")
    }

    @Test func setUnsavedStaysInMemoryUntilSaved() throws {
        let cache = try ObjectCache<String, String>(directory: directory.url)
        cache.setUnsaved("draft", forKey: "a")
        #expect(cache.hasUnsavedValue(forKey: "a"))
        #expect(try cache.value(forKey: "a") == "draft")
        #expect(try !cache.disk.containsValue(forKey: cache.keyHasher.engineKey(for: Data("s:a".utf8))))
        try cache.save(forKey: "a")
        #expect(!cache.hasUnsavedValue(forKey: "a"))
        #expect(try cache.disk.containsValue(forKey: cache.keyHasher.engineKey(for: Data("s:a".utf8))))
        try cache.close()
    }

    @Test func theAsyncOverloadsDoWhatTheSynchronousOnesDo() async throws {
        let cache = try ObjectCache<String, String>(directory: directory.url, configuration: .init(memoryLimit: 0))
        try await cache.set("one", forKey: "a")
        try await cache.set("short", forKey: "b", expiresAfter: .zero)
        #expect(try await cache.containsValue(forKey: "a"))
        #expect(try await Set(cache.keys()) == ["a", "b"])
        #expect(try await cache.removeExpired() == 1)
        #expect(try await cache.removeValue(forKey: "a"))
        #expect(try await !cache.containsValue(forKey: "a"))
        try await cache.setMaxDiskSize(1 << 20)
        #expect(cache.maxDiskSize == 1 << 20)
        cache.setUnsaved("draft", forKey: "c")
        try await cache.save(forKey: "c")
        #expect(!cache.hasUnsavedValue(forKey: "c"))
        try await cache.close()
        await #expect(throws: ObjectCacheError.self) { try await cache.set("late", forKey: "d") }
    }
}
