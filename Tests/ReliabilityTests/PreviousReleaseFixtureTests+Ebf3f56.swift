import Foundation
import SwiftyCacheCodable
import SwiftyCacheCore
import SwiftyCacheTestSupport
import Testing

/// What the releases after b66caf2 wrote on disk, as ebf3f56 (the last of them) wrote it:
/// journals of batches, directories that are their own log (`syncsWrites`), directories
/// several caches wrote (`journal.share`), storage class and warm start records.
extension PreviousReleaseFixtureTests {
    /// The engine directories only ebf3f56's generator wrote, and the storage each was written
    /// with (batches inline up to 64 KiB, so that each is one `BATCH` line).
    static let ebf3f56EngineFixtures: [(String, DiskLRUCache.Storage)] = [
        ("engine-packed-batches-unclosed", .packed(inlineLimit: 1 << 16)),
        ("engine-packed-log", .packed), ("engine-packed-log-unclosed", .packed),
        ("engine-packed-shared", .packed(inlineLimit: 1 << 16)),
        ("engine-packed-shared-unclosed", .packed(inlineLimit: 1 << 16)),
    ]

    /// Each reopens five times, as the engine fixtures of every release do: as ebf3f56 left it
    /// (batches replayed whole, a log's tail scanned, a shared journal left by two caches), after
    /// this release closed it, after it rewrote the journal, with `syncsWrites`, after a crash.
    @Test(arguments: ebf3f56EngineFixtures)
    func anEngineDirectoryOfEbf3f56ReopensValueForValue(name: String, storage: DiskLRUCache.Storage) throws {
        let (temporary, url) = try Self.copy(name, of: "ebf3f56")
        _ = temporary
        for pass in 0..<5 {
            let cache = try DiskLRUCache(
                directory: url, appVersion: 3, valueCount: 2, maxSize: 1 << 30,
                options: .init(syncsWrites: pass >= 3, storage: storage))
            #expect(cache.recoveryReport.wipeReason == nil, "pass \(pass)")
            #expect(cache.recoveryReport.unknownFiles.isEmpty, "pass \(pass)")
            try Self.expectEngineValues(in: cache)
            if pass == 1 { try cache.compact() }
            if pass == 3 { cache.simulateCrash() } else { try cache.close() }
        }
    }

    /// A directory two sharing caches of ebf3f56 wrote (closed, and left open by both) opens
    /// shared by two caches of this release, each seeing the other's writes, and alone after.
    @Test(arguments: ["engine-packed-shared", "engine-packed-shared-unclosed"])
    func aSharedDirectoryOfEbf3f56OpensShared(name: String) throws {
        let (temporary, url) = try Self.copy(name, of: "ebf3f56")
        _ = temporary
        var options = DiskLRUCache.Options(storage: .packed(inlineLimit: 1 << 16))
        options.sharing = .processes
        let first = try DiskLRUCache(directory: url, appVersion: 3, valueCount: 2, maxSize: 1 << 30, options: options)
        let second = try DiskLRUCache(directory: url, appVersion: 3, valueCount: 2, maxSize: 1 << 30, options: options)
        try Self.expectEngineValues(in: first)
        try Self.expectEngineValues(in: second)
        try second.setData([Data("a".utf8), Data("b".utf8)], forKey: "shared-new")
        #expect(try first.data(forKey: "shared-new") == [Data("a".utf8), Data("b".utf8)])
        _ = try first.removeValue(forKey: "key-0")
        #expect(try second.data(forKey: "key-0") == nil)
        try first.close()
        try second.close()
        let alone = try DiskLRUCache(
            directory: url, appVersion: 3, valueCount: 2, maxSize: 1 << 30, options: .init(storage: .packed))
        #expect(try alone.data(forKey: "shared-new") == [Data("a".utf8), Data("b".utf8)])
        #expect(try alone.data(forKey: "key-0") == nil)
        #expect(try alone.data(forKey: "key-3") == [0, 1].map { Self.engineValue(3, slot: $0, round: 1) })
        #expect(alone.count == 32)
        try alone.close()
    }

    /// An object cache ebf3f56 wrote in the sharing mode reopens shared and alone.
    @Test(arguments: [DiskLRUCache.Sharing.processes, .singleProcess])
    func anObjectCacheOfEbf3f56WrittenSharedReopens(sharing: DiskLRUCache.Sharing) throws {
        let (temporary, url) = try Self.copy("object-json-shared", of: "ebf3f56")
        _ = temporary
        var configuration = ObjectCacheConfiguration()
        configuration.sharing = sharing
        let cache = try ObjectCache<String, Note>(directory: url, configuration: configuration)
        for index in 0..<25 { #expect(try cache.value(forKey: "note-\(index)") == Self.note(index), "note-\(index)") }
        try cache.close()
    }

    /// Namespaces of both storage classes ebf3f56 wrote (the `objectcache-class` record, a warm
    /// start record, write-back values saved as one batch, the durable one syncing its writes):
    /// each reopens with its class and warm, and refuses the other class.
    @Test(arguments: [CacheStorageClass.purgeable, .durable])
    func aNamespaceOfEbf3f56ReopensWithItsClassAndWarm(storageClass: CacheStorageClass) async throws {
        let name = storageClass == .durable ? "store-durable" : "store-purgeable"
        let (temporary, url) = try Self.copy(name, of: "ebf3f56")
        _ = temporary
        var configuration = ObjectCacheConfiguration()
        configuration.warmStartCount = 10
        configuration.syncsWrites = storageClass == .durable
        let other: CacheStorageClass = storageClass == .durable ? .purgeable : .durable
        var mismatched = configuration
        mismatched.storageClass = other
        let refused = try #require(throws: ObjectCacheError.self) {
            try ObjectCache<String, Note>(directory: url.appending(path: "notes"), configuration: mismatched)
        }
        #expect(refused.code == .storageClassConflict)

        let store = CacheStore(directory: url, storageClass: storageClass)
        let notes = try store.objects("notes", of: Note.self, configuration: configuration)
        await notes.waitUntilWarm()
        #expect(notes.memoryCount == 10)
        for index in 0..<25 {
            #expect(try await notes.value(forKey: "note-\(index)") == Self.note(index), "note-\(index)")
        }
        try await notes.close()
    }
}
