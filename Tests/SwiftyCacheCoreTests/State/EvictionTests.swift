import Foundation
import SwiftyCacheCore
import SwiftyCacheTestSupport
import Testing

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

@Suite struct EvictionTests {
    let directory = TemporaryDirectory()

    @Test(arguments: bothStorages) func evictOnInsert(storage: DiskLRUCache.Storage) throws {
        let cache = try openCache(directory.url, maxSize: 10, storage: storage)
        try cache.set("a", "a", "aaa")  // 4
        try cache.set("b", "bb", "bbbb")  // 6
        #expect(cache.size == 10)
        try cache.set("c", "c", "c")  // 12: evicts a
        try cache.flush()
        #expect(cache.size == 8)
        #expect(try cache.strings("a") == nil)
        #expect(try cache.strings("b") == ["bb", "bbbb"])
        // Reading b made it newer than c: the order is now c, b.
        try cache.set("d", "d", "d")  // 10: nothing; order c, b, d
        try cache.flush()
        #expect(cache.size == 10)
        #expect(try cache.keys() == ["c", "b", "d"])
        try cache.set("e", "eeee", "eeee")  // 18: evicts c (2), then b (6), the eldest first
        try cache.flush()
        #expect(cache.size == 10)
        #expect(try cache.keys() == ["d", "e"])
        #expect(try cache.strings("c") == nil)
        #expect(try cache.strings("e") == ["eeee", "eeee"])
        #expect(cache.statistics.evictionCount == 3)
    }

    @Test(arguments: bothStorages) func evictOnUpdate(storage: DiskLRUCache.Storage) throws {
        let cache = try openCache(directory.url, maxSize: 10, storage: storage)
        try cache.set("a", "a", "aa")
        try cache.set("b", "b", "bb")
        try cache.set("c", "c", "cc")
        #expect(cache.size == 9)
        try cache.set("b", "b", "bbbb")  // 11: evicts a
        try cache.flush()
        #expect(cache.size == 8)
        #expect(try cache.strings("a") == nil)
        #expect(try cache.strings("b") == ["b", "bbbb"])
        #expect(try cache.strings("c") == ["c", "cc"])
    }

    @Test(arguments: bothStorages) func evictionHonorsLRUFromCurrentSession(storage: DiskLRUCache.Storage) throws {
        let cache = try openCache(directory.url, maxSize: 10, storage: storage)
        for key in ["a", "b", "c", "d", "e"] { try cache.set(key, key, key) }
        try cache.snapshot(forKey: "b")?.close()
        try cache.set("f", "f", "f")
        try cache.set("g", "g", "g")
        try cache.flush()
        #expect(cache.size == 10)
        #expect(try cache.keys() == ["d", "e", "b", "f", "g"])
    }

    @Test(arguments: bothStorages) func entryLargerThanMaxSizeIsEvicted(storage: DiskLRUCache.Storage) throws {
        let cache = try openCache(directory.url, maxSize: 10, storage: storage)
        try cache.set("a", "aaaaa", "aaaaaa")
        try cache.flush()
        #expect(try cache.snapshot(forKey: "a") == nil)
        #expect(cache.size == 0)
    }

    @Test(arguments: bothStorages) func loweringMaxSizeTrimsAndRaisingItDoesNot(storage: DiskLRUCache.Storage) throws {
        let cache = try openCache(directory.url, maxSize: 20, storage: storage)
        try cache.set("a", "a", "aaa")
        try cache.set("b", "bb", "bbbb")
        try cache.set("c", "c", "c")
        try cache.setMaxSize(10)
        cache.waitForBackgroundWork()
        #expect(cache.size == 8)
        #expect(try cache.keys() == ["b", "c"])
        try cache.setMaxSize(100)
        try cache.set("d", "dddddd", "dddddd")
        try cache.flush()
        #expect(cache.size == 20)
        expectError(.invalidConfiguration) { try cache.setMaxSize(0) }
    }

    @Test(arguments: bothStorages) func evictionHappensInTheBackgroundWithoutFlush(storage: DiskLRUCache.Storage) throws
    {
        let cache = try openCache(directory.url, maxSize: 10, storage: storage)
        for i in 0..<20 { try cache.set("k\(i)", "aa", "bbb") }
        cache.waitForBackgroundWork()
        #expect(cache.size <= 10)
        #expect(try storedValueBytes(cache, in: directory.url, storage: storage) == cache.size)
        // No temporary or trash file is left behind.
        #expect(try JournalFixture.fileNames(in: directory.url).filter { $0.hasSuffix(".tmp") } == [])
    }

    /// A cache with `maxSize` 10 holding `a` and `b` (5 bytes each), over a file system that
    /// counts and fails calls on demand.
    func fullCacheOfTwo() throws -> (DiskLRUCache, FaultInjectingFileSystem) {
        let fileSystem = FaultInjectingFileSystem()
        let cache = try DiskLRUCache(
            directory: directory.url, appVersion: testAppVersion, valueCount: 2, maxSize: 10, fileSystem: fileSystem)
        try cache.set("a", "aa", "aaa")
        try cache.set("b", "bb", "bbb")
        return (cache, fileSystem)
    }

    @Test func aCommitToAFullCacheEvictsItselfInTheSameJournalWrite() throws {
        let (cache, fileSystem) = try fullCacheOfTwo()
        let writesBefore = fileSystem.calls(to: "write")
        try cache.set("c", "cc", "ccc")
        // No flush and no waiting for the cleanup thread: the commit evicted `a` itself, and its
        // CLEAN and REMOVE lines went out in one write. The writes: DIRTY (before any value file
        // exists), the two value files, then CLEAN with REMOVE.
        #expect(fileSystem.calls(to: "write") - writesBefore == 4)
        #expect(cache.size == 10)
        #expect(try cache.keys() == ["b", "c"])
        #expect(cache.statistics.evictionCount == 1)
        #expect(try !JournalFixture.fileNames(in: directory.url).contains("a.0"))
        try expectJournal(
            directory.url,
            [
                "DIRTY a", "CLEAN a 2 3", "DIRTY b", "CLEAN b 2 3", "DIRTY c", "CLEAN c 2 3", "REMOVE a",
            ])
    }

    @Test(arguments: bothStorages) func evictionsBeyondTheInlineLimitFinishInTheBackground(
        storage: DiskLRUCache.Storage
    ) throws {
        let cache = try openCache(directory.url, maxSize: 40, valueCount: 1, storage: storage)
        for i in 0..<40 { try cache.setData([Data("x".utf8)], forKey: "k\(i)") }
        // 30 bytes more: 30 entries must go, more than one commit evicts by itself.
        try cache.setData([Data(repeating: UInt8(ascii: "y"), count: 30)], forKey: "big")
        cache.waitForBackgroundWork()
        #expect(cache.size == 40)
        #expect(cache.statistics.evictionCount == 30)
        #expect(try cache.keys() == (30..<40).map { "k\($0)" } + ["big"])
        let lines = try JournalFixture.bodyLines(in: directory.url)
        let clean = try #require(lines.firstIndex(of: "CLEAN big 30"))
        #expect(Array(lines[(clean + 1)...]) == (0..<30).map { "REMOVE k\($0)" })
    }

    @Test func aJournalFailureInAnEvictingCommitKeepsTheVictims() throws {
        let (cache, fileSystem) = try fullCacheOfTwo()
        // The next set: the DIRTY write, open, write, close per slot (6 calls), two renames, then
        // the journal write of CLEAN and REMOVE.
        fileSystem.failCall(number: 10, errno: EIO)
        do {
            try cache.set("c", "cc", "ccc")
            Issue.record("no error")
        } catch let error as CacheError {
            #expect(error.code == .ioFailure)
            #expect(error.key == "c")
            #expect(error.path?.hasSuffix("/journal") == true)
        }
        #expect(fileSystem.injectedFaults == 1)
        // Nothing was evicted for a commit that did not happen.
        #expect(try cache.strings("a") == ["aa", "aaa"])
        #expect(try cache.strings("b") == ["bb", "bbb"])
        #expect(try cache.strings("c") == nil)
        #expect(cache.size == 10)
        try cache.close()
        let reopened = try openCache(directory.url, maxSize: 10)
        #expect(Set(try reopened.keys()) == ["a", "b"])
        #expect(try reopened.strings("a") == ["aa", "aaa"])
        #expect(try JournalFixture.valueBytes(in: directory.url) == 10)
    }

    @Test(arguments: bothStorages) func entryBeingEditedIsSkipped(storage: DiskLRUCache.Storage) throws {
        let cache = try openCache(directory.url, maxSize: 10, storage: storage)
        try cache.set("a", "aa", "aa")
        let editor = try #require(try cache.edit(forKey: "a"))
        try cache.set("b", "bbb", "bbb")
        try cache.set("c", "ccc", "ccc")
        try cache.flush()
        // a is the eldest but is being edited: b goes instead.
        #expect(try cache.keys() == ["a", "c"])
        try editor.setData(Data("A".utf8), at: 0)
        try editor.commit()
        #expect(try cache.strings("a") == ["A", "aa"])
    }

    @Test(arguments: bothStorages) func evictedEntryStaysReadableThroughItsSnapshot(storage: DiskLRUCache.Storage)
        throws
    {
        let cache = try openCache(directory.url, maxSize: 10, storage: storage)
        try cache.set("a", "aa", "aaa")
        let snapshot = try #require(try cache.snapshot(forKey: "a"))
        try cache.set("b", "bb", "bbb")
        try cache.set("c", "cc", "ccc")
        try cache.flush()
        #expect(try cache.snapshot(forKey: "a") == nil)
        #expect(try snapshot.readString(at: 0) == "aa")
        #expect(try snapshot.readString(at: 1) == "aaa")
        #expect(try snapshot.edit() == nil)
    }

    @Test(arguments: bothStorages) func evictAllRemovesEverythingButEntriesBeingEdited(storage: DiskLRUCache.Storage)
        throws
    {
        let cache = try openCache(directory.url, storage: storage)
        try cache.set("a", "a", "a")
        try cache.set("b", "b", "b")
        let editor = try #require(try cache.edit(forKey: "c"))
        try cache.evictAll()
        #expect(cache.count == 0)
        #expect(cache.size == 0)
        try editor.setData(Data("c".utf8), at: 0)
        try editor.setData(Data("c".utf8), at: 1)
        try editor.commit()
        #expect(try cache.keys() == ["c"])
    }

    @Test(arguments: bothStorages) func repeatedOverwritesKeepTheJournalSmall(storage: DiskLRUCache.Storage) throws {
        let cache = try openCache(directory.url, valueCount: 1, storage: storage)
        let journal = directory.appending("journal").path(percentEncoded: false)
        var largest = 0
        for round in 0..<2_000 {
            for key in 0..<10 { try cache.setData([Data("v\(round)".utf8)], forKey: "key\(key)") }
            if round % 100 == 99 {
                // Once the rebuild the writes asked for has run (a loaded machine may delay it).
                cache.waitForBackgroundWork()
                let size = try FileManager.default.attributesOfItem(atPath: journal)[.size] as? Int ?? 0
                largest = max(largest, size)
            }
        }
        cache.waitForBackgroundWork()
        try cache.flush()
        let finalSize = try FileManager.default.attributesOfItem(atPath: journal)[.size] as? Int ?? 0
        // 20,000 commits write 40,000 lines (about 700 KiB) without compaction.
        #expect(largest < 96 << 10, "journal grew to \(largest) bytes")
        #expect(finalSize < 96 << 10)
        try cache.close()
        let reopened = try openCache(directory.url, valueCount: 1, storage: storage)
        #expect(try reopened.data(forKey: "key3") == [Data("v1999".utf8)])
    }

    @Test(arguments: bothStorages) func repeatedReadsKeepTheJournalSmall(storage: DiskLRUCache.Storage) throws {
        let cache = try openCache(directory.url, storage: storage)
        try cache.set("a", "a", "a")
        try cache.set("b", "b", "b")
        for _ in 0..<6_000 {
            try cache.snapshot(forKey: "a")?.close()
            try cache.snapshot(forKey: "b")?.close()
        }
        cache.waitForBackgroundWork()
        try cache.flush()
        let size =
            try FileManager.default.attributesOfItem(
                atPath: directory.appending("journal").path(percentEncoded: false))[.size] as? Int ?? 0
        // Without rebuilds, 12,000 READ lines: 150 KiB (330 KiB with packed lines' checks).
        #expect(size < 64 << 10, "journal is \(size) bytes")
        try cache.close()
        #expect(try openCache(directory.url, storage: storage).strings("b") == ["b", "b"])
    }
}
