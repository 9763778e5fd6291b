import Foundation
import SwiftyCacheCodable
import SwiftyCacheCore
import SwiftyCacheTestSupport
import Testing

/// The object layer's own surface: its counts, and that every failure reaches the caller as an
/// `ObjectCacheError` with the engine's error, when there is one, as its cause.
@Suite struct ObjectCacheSurfaceTests {
    let directory = TemporaryDirectory()

    @Test func countIsEmptyAndContainsSeeDiskAndUnsavedValues() throws {
        let clock = TestClock()
        let cache = try ObjectCache<String, String>(
            directory: directory.url, configuration: .init(memoryLimit: 10, clock: clock.function))
        #expect(cache.isEmpty)
        #expect(cache.count == 0)
        #expect(try !cache.containsValue(forKey: "a"))
        try cache.set("on disk", forKey: "a")
        cache.setUnsaved("unsaved", forKey: "b")
        try cache.set("short-lived", forKey: "c", expiresAfter: .seconds(10))
        cache.setUnsaved("unsaved over a saved value", forKey: "a")  // on disk already: counted once
        #expect(cache.count == 3)
        #expect(!cache.isEmpty)
        #expect(try cache.containsValue(forKey: "a"))
        #expect(try cache.containsValue(forKey: "b"))
        #expect(try cache.containsValue(forKey: "c"))
        #expect(try !cache.containsValue(forKey: "z"))
        clock.advance(by: 11)
        #expect(try !cache.containsValue(forKey: "c"))  // expired, in memory and on disk alike
        cache.clearMemory()  // saves b and the new a
        #expect(try cache.containsValue(forKey: "b"))  // now from disk, through the envelope
        #expect(try !cache.containsValue(forKey: "c"))
        #expect(cache.count == 3)  // c still occupies disk until read or removed
        #expect(try cache.removeExpired() == 1)
        #expect(cache.count == 2)
        let before = cache.statistics
        _ = try cache.containsValue(forKey: "a")
        #expect(cache.statistics == before)  // not a read
    }

    @Test func containsIsFalseForAnotherKeyUnderTheSameHash() throws {
        let cache = try ObjectCache<String, String>(
            directory: directory.url, configuration: .init(keyHasher: ConstantHasher()))
        try cache.set("value of a", forKey: "a")
        cache.clearMemory()
        #expect(try cache.containsValue(forKey: "a"))
        #expect(try !cache.containsValue(forKey: "b"))
    }

    @Test func aLockedDirectoryIsAnObjectCacheErrorCausedByTheEngine() throws {
        let first = try ObjectCache<String, String>(directory: directory.url)
        do {
            _ = try ObjectCache<String, String>(directory: directory.url)
            Issue.record("a second cache opened the same directory")
        } catch let error as ObjectCacheError {
            #expect(error.code == .diskFailure)
            #expect(error.operation == .open)
            // Both layers say where they built their error.
            #expect(error.location?.file.hasPrefix("SwiftyCacheCodable/") == true)
            let cause = try #require(error.cause as? CacheError)
            #expect(cause.code == .directoryLocked)
            #expect(cause.location?.file.hasPrefix("SwiftyCacheCore/") == true)
        }
        try first.close()
    }

    @Test func closeAndUseAfterCloseThrowObjectCacheError() throws {
        let cache = try ObjectCache<String, String>(directory: directory.url)
        try cache.set("v", forKey: "k")
        try cache.close()
        for call in [{ try cache.set("w", forKey: "k") }, { _ = try cache.removeValue(forKey: "k") }] {
            do {
                try call()
                Issue.record("a closed cache accepted a call")
            } catch let error as ObjectCacheError {
                #expect((error.cause as? CacheError)?.code == .cacheClosed)
            }
        }
    }

    @Test func storeSizesAndClearsClosedNamespacesThroughTheEngine() throws {
        let recordedSize: Int
        do {
            let first = CacheStore(directory: directory.url)
            let cache = try first.objects("a", of: String.self)
            try cache.set(String(repeating: "x", count: 500), forKey: "k")
            recordedSize = cache.diskSize
            try cache.close()
        }
        let store = CacheStore(directory: directory.url)
        #expect(store.totalSize() == recordedSize)
        try store.clearAll()
        #expect(store.namespaces() == [])
        #expect(!FileManager.default.fileExists(atPath: directory.appending("a").path(percentEncoded: false)))
    }

    @Test func clearingAClosedNamespaceKeepsTheUsersFilesInIt() throws {
        do {
            let first = CacheStore(directory: directory.url)
            let cache = try first.objects("a", of: String.self)
            try cache.set("v", forKey: "k")
            try cache.close()
        }
        // A file of the user's in the namespace's folder: never counted, never deleted.
        try Data(repeating: 1, count: 9_999).write(to: directory.appending("a/notes.backup"))
        let store = CacheStore(directory: directory.url)
        #expect(store.totalSize() < 9_999)
        try store.clearAll()
        let left = try FileManager.default.contentsOfDirectory(
            atPath: directory.appending("a").path(percentEncoded: false))
        #expect(left == ["notes.backup"])
    }

    @Test func clearingANamespaceOpenElsewhereThrowsAndKeepsIt() throws {
        let owner = CacheStore(directory: directory.url)
        let cache = try owner.objects("busy", of: String.self)
        try cache.set("v", forKey: "k")
        let other = CacheStore(directory: directory.url)
        do {
            try other.clearAll()
            Issue.record("a namespace open in another store was deleted")
        } catch let error as ObjectCacheError {
            #expect((error.cause as? CacheError)?.code == .directoryLocked)
        }
        #expect(try cache.value(forKey: "k") == "v")
        try cache.close()
    }

    @Test func aReadOnlyObjectCacheReadsAndRefusesWrites() throws {
        let clock = TestClock()
        do {
            let writer = try ObjectCache<String, String>(
                directory: directory.url, configuration: .init(clock: clock.function))
            try writer.set("kept", forKey: "a")
            try writer.set("short-lived", forKey: "b", expiresAfter: .seconds(5))
            try writer.close()
        }
        clock.advance(by: 10)
        let reader = try ObjectCache<String, String>(
            directory: directory.url, configuration: .init(isReadOnly: true, clock: clock.function))
        #expect(reader.isReadOnly)
        #expect(try reader.value(forKey: "a") == "kept")
        #expect(try reader.value(forKey: "b") == nil)  // expired: a miss, and nothing is removed
        do {
            try reader.set("x", forKey: "c")
            Issue.record("a read-only cache wrote")
        } catch let error as ObjectCacheError {
            #expect((error.cause as? CacheError)?.code == .readOnly)
        }
        reader.setUnsaved("ignored", forKey: "c")
        #expect(!reader.hasUnsavedValue(forKey: "c"))
        try reader.close()
        let writer = try ObjectCache<String, String>(
            directory: directory.url, configuration: .init(clock: clock.function))
        #expect(writer.count == 2)  // b is still on disk: the reader removed nothing
    }

    @Test func aReadOnlyStoreOpensNamespacesReadOnlyAndRefusesToClear() throws {
        do {
            let store = CacheStore(directory: directory.url)
            let pages = try store.objects("pages", of: String.self)
            try pages.set("page", forKey: "p")
            try pages.close()
        }
        let store = CacheStore(directory: directory.url, readOnly: true)
        let pages = try store.objects("pages", of: String.self)
        #expect(pages.isReadOnly)
        #expect(try pages.value(forKey: "p") == "page")
        do {
            try store.clearAll()
            Issue.record("a read-only store cleared")
        } catch let error as ObjectCacheError {
            #expect(error.code == .readOnly)
        }
        #expect(try pages.value(forKey: "p") == "page")
    }
}
