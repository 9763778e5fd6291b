import Foundation
import SwiftyCacheCore
import SwiftyCacheTestSupport
import Testing

/// Pinned entries: eviction by size passes them by, their bytes have a ceiling, and the pins
/// hold through writes, reopening, crashes and compaction, in both storages.
@Suite struct PinnedEntryTests {
    let directory = TemporaryDirectory()

    static let storages: [DiskLRUCache.Storage] = [.files, .packed]

    func open(
        _ storage: DiskLRUCache.Storage, maxSize: Int = 10_000, maxPinnedSize: Int? = nil, syncsWrites: Bool = false,
        readOnly: Bool = false
    ) throws -> DiskLRUCache {
        var options = DiskLRUCache.Options(syncsWrites: syncsWrites, isReadOnly: readOnly, storage: storage)
        options.maxPinnedSize = maxPinnedSize
        options.packedSegmentSize = 4 << 10
        options.compactsInBackground = false
        return try DiskLRUCache(
            directory: directory.url, appVersion: testAppVersion, valueCount: 1, maxSize: maxSize, options: options)
    }

    static func value(_ byte: Int, _ length: Int = 1_000) -> [Data] {
        [Data(repeating: UInt8(byte % 251), count: length)]
    }

    /// Fills the cache with many more bytes than it holds, then checks the pinned keys stayed.
    func churn(_ cache: DiskLRUCache, rounds: Int = 60, prefix: String = "filler") throws {
        for i in 0..<rounds { try cache.setData(Self.value(i), forKey: "\(prefix)-\(i)") }
        cache.waitForBackgroundWork()
    }

    @Test(arguments: storages)
    func evictionPassesPinnedEntriesBy(storage: DiskLRUCache.Storage) throws {
        let cache = try open(storage)
        for i in 0..<3 { try cache.setData(Self.value(100 + i), forKey: "kept-\(i)") }
        try cache.setData(Self.value(7), forKey: "plain")
        for i in 0..<3 { #expect(try cache.pin("kept-\(i)")) }
        #expect(try !cache.pin("missing"))
        try churn(cache)
        for i in 0..<3 { #expect(try cache.data(forKey: "kept-\(i)") == Self.value(100 + i)) }
        #expect(try cache.data(forKey: "plain") == nil)
        #expect(cache.size <= 10_000)
        #expect(try cache.pinnedKeys() == ["kept-0", "kept-1", "kept-2"])
        #expect(cache.pinnedSize == 3_000)

        // Unpinned, an entry is evicted as any other.
        #expect(try cache.unpin("kept-1"))
        #expect(try !cache.unpin("kept-1"))
        try churn(cache, prefix: "more")
        #expect(try cache.data(forKey: "kept-1") == nil)
        #expect(try cache.data(forKey: "kept-0") != nil)
        try cache.close()
    }

    @Test(arguments: storages)
    func pinsPastTheCeilingAreRefused(storage: DiskLRUCache.Storage) throws {
        let cache = try open(storage, maxPinnedSize: 2_500)
        for i in 0..<3 { try cache.setData(Self.value(i), forKey: "k\(i)") }
        #expect(try cache.pin("k0"))
        #expect(try cache.pin("k1"))
        #expect { try cache.pin("k2") } throws: { ($0 as? CacheError)?.code == .pinLimitExceeded }
        #expect(try !cache.isPinned("k2"))
        // Pinning again what is pinned costs nothing more.
        #expect(try cache.pin("k1"))
        try cache.close()
        // The default ceiling is half of maxSize.
        let halves = try open(storage, maxSize: 4_000)
        #expect(try halves.pin("k0"))
        #expect(try halves.pin("k1"))
        #expect { try halves.pin("k2") } throws: { ($0 as? CacheError)?.code == .pinLimitExceeded }
        try halves.close()
    }

    @Test(arguments: storages, [false, true])
    func pinsHoldThroughWritesReopeningCrashesAndCompaction(storage: DiskLRUCache.Storage, syncsWrites: Bool) throws {
        var cache = try open(storage, syncsWrites: syncsWrites)
        try cache.setData(Self.value(1), forKey: "kept")
        try cache.pin("kept")
        // A write of the key keeps its pin.
        try cache.setData(Self.value(2, 1_200), forKey: "kept")
        try cache.close()

        cache = try open(storage, syncsWrites: syncsWrites)
        #expect(try cache.isPinned("kept"))
        try churn(cache)
        #expect(try cache.data(forKey: "kept") == Self.value(2, 1_200))
        cache.simulateCrash()

        cache = try open(storage, syncsWrites: syncsWrites)
        #expect(try cache.isPinned("kept"))
        try churn(cache, prefix: "after-crash")
        try cache.compact()
        #expect(try cache.data(forKey: "kept") == Self.value(2, 1_200))
        try cache.close()

        let reader = try open(storage, readOnly: true)
        #expect(try reader.isPinned("kept"))
        #expect { try reader.pin("kept") } throws: { ($0 as? CacheError)?.code == .readOnly }
        try reader.close()
    }

    @Test(arguments: storages)
    func aRemovedEntryTakesItsPinWithIt(storage: DiskLRUCache.Storage) throws {
        var cache = try open(storage)
        try cache.setData(Self.value(1), forKey: "a")
        try cache.setData(Self.value(2), forKey: "b")
        try cache.pin("a")
        try cache.pin("b")
        #expect(try cache.removeValue(forKey: "a"))
        #expect(try cache.pinnedKeys() == ["b"])
        try cache.close()

        // Not pinned again when the key comes back, also after a reopen.
        cache = try open(storage)
        try cache.setData(Self.value(3), forKey: "a")
        #expect(try !cache.isPinned("a"))
        #expect(try cache.isPinned("b"))
        try cache.evictAll()
        try cache.close()
        cache = try open(storage)
        try cache.setData(Self.value(2), forKey: "b")
        #expect(try cache.pinnedKeys().isEmpty)
        try cache.close()
        #expect(!FileManager.default.fileExists(atPath: directory.url.appending(path: "journal.pins").path))
    }

    @Test func aDamagedOrForeignPinRecordPinsNothingItShouldNot() throws {
        var cache = try open(.packed)
        try cache.setData(Self.value(1), forKey: "a")
        try cache.close()
        let record = directory.url.appending(path: "journal.pins")
        for bytes in [
            Data("not a pin record\na\n".utf8), Data(repeating: 0xFF, count: 100),
            Data("swiftycache.pins 1\n../etc/passwd\nghost\n\n".utf8),
        ] {
            try bytes.write(to: record)
            cache = try open(.packed)
            #expect(try cache.pinnedKeys().isEmpty)
            try cache.setData(Self.value(2), forKey: "b")
            try cache.close()
        }
        try Data("swiftycache.pins 1\nghost\na\n".utf8).write(to: record)
        cache = try open(.packed)
        #expect(try cache.pinnedKeys() == ["a"])
        // A writer drops the keys that name no entry from the record at its first change.
        try cache.setData(Self.value(3), forKey: "c")
        #expect(try String(contentsOf: record, encoding: .utf8) == "swiftycache.pins 1\na\n")
        try cache.close()
    }

    /// Pins stay out of the journal: in file storage it is the Java library's format, line for
    /// line, whatever is pinned (Java would call an unknown line corruption and delete the
    /// cache). The Java library and earlier releases leave `journal.pins` alone.
    @Test func pinningWritesNothingToTheJournal() throws {
        let cache = try open(.files)
        try cache.setData(Self.value(1), forKey: "a")
        try cache.flush()
        let journal = directory.url.appending(path: "journal")
        let before = try Data(contentsOf: journal)
        try cache.pin("a")
        try cache.flush()
        #expect(try Data(contentsOf: journal) == before)
        #expect(cache.recoveryReport.unknownFiles.isEmpty)
        try cache.close()
        let reopened = try open(.files)
        #expect(reopened.recoveryReport.unknownFiles.isEmpty)
        try reopened.close()
    }
}
