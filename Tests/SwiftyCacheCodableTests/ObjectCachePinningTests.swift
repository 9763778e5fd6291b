import Foundation
import SwiftyCacheCodable
import SwiftyCacheCore
import SwiftyCacheTestSupport
import Testing

/// Pinned values through the typed cache: kept under eviction pressure and across reopening,
/// an unsaved value saved before it is pinned, the ceiling reported.
@Suite struct ObjectCachePinningTests {
    let directory = TemporaryDirectory()

    func cache(_ storage: DiskLRUCache.Storage, maxPinned: Int? = nil) throws -> ObjectCache<String, String> {
        try ObjectCache(
            directory: directory.url,
            configuration: .init(maxDiskSize: 20_000, memoryLimit: 0, storage: storage) {
                $0.maxPinnedDiskSize = maxPinned
            })
    }

    static let page = String(repeating: "offline page ", count: 80)

    @Test(arguments: [DiskLRUCache.Storage.packed, .files])
    func aPinnedValueOutlivesEvictionAndReopening(storage: DiskLRUCache.Storage) throws {
        var cache = try cache(storage)
        try cache.set("keep me " + Self.page, forKey: "kept")
        cache.setUnsaved("draft " + Self.page, forKey: "draft")
        #expect(try cache.pin("kept"))
        #expect(try cache.pin("draft"))
        #expect(!cache.hasUnsavedValue(forKey: "draft"))
        #expect(try !cache.pin("nothing"))
        for i in 0..<100 { try cache.set("\(i) " + Self.page, forKey: "filler-\(i)") }
        try cache.close()

        cache = try self.cache(storage)
        #expect(try cache.value(forKey: "kept") == "keep me " + Self.page)
        #expect(try cache.value(forKey: "draft") == "draft " + Self.page)
        #expect(try cache.value(forKey: "filler-0") == nil)
        #expect(try cache.isPinned("kept"))
        #expect(cache.pinnedDiskSize > 2 * Self.page.utf8.count)
        #expect(try cache.unpin("kept"))
        #expect(try !cache.isPinned("kept"))
        try cache.close()
    }

    @Test func aPinPastTheCeilingSaysSo() throws {
        let cache = try cache(.packed, maxPinned: 1_500)
        try cache.set(Self.page, forKey: "a")
        try cache.set(Self.page, forKey: "b")
        #expect(try cache.pin("a"))
        #expect {
            try cache.pin("b")
        } throws: {
            (($0 as? ObjectCacheError)?.cause as? CacheError)?.code == .pinLimitExceeded
        }
        try cache.close()
    }

    @Test func theCeilingInEffectIsHalfOfWhatTheEntriesMayTake() throws {
        // File storage counts values only: half of maxDiskSize.
        let files = try cache(.files)
        #expect(files.maxPinnedDiskSize == 10_000)
        try files.close()
        // Packed storage bounds the directory: half the entries' share, two fifths of so small
        // a limit.
        try FileManager.default.removeItem(at: directory.url)
        let packed = try cache(.packed)
        #expect(packed.maxPinnedDiskSize == 4_000)
        try packed.close()
        let set = try cache(.packed, maxPinned: 1_500)
        #expect(set.maxPinnedDiskSize == 1_500)
        try set.close()
    }
}

extension ObjectCacheConfiguration {
    /// A configuration with `change` applied.
    init(
        maxDiskSize: Int, memoryLimit: Int, storage: DiskLRUCache.Storage,
        _ change: (inout ObjectCacheConfiguration) -> Void
    ) {
        self.init(maxDiskSize: maxDiskSize, memoryLimit: memoryLimit, storage: storage)
        change(&self)
    }
}
