import Foundation
import SwiftyCacheCore
import SwiftyCacheTestSupport
import Testing

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// `write(_:)`: several sets and removals as one unit in packed storage (one append, one
/// `BATCH` line, the syncs of one commit), one entry at a time in file storage.
@Suite struct WriteBatchTests {
    let directory = TemporaryDirectory()
    let fileSystem = FaultInjectingFileSystem()

    func open(_ storage: DiskLRUCache.Storage = .packed, syncsWrites: Bool = false) throws -> DiskLRUCache {
        try DiskLRUCache(
            directory: directory.url, appVersion: testAppVersion, valueCount: 2, maxSize: Int.max,
            options: DiskLRUCache.Options(syncsWrites: syncsWrites, storage: storage), fileSystem: fileSystem)
    }

    func pair(_ text: String) -> [Data] { [Data("\(text)-0".utf8), Data("\(text)-1".utf8)] }

    func batch(keys: Range<Int>, value: String, removing removed: [String] = []) -> DiskLRUCache.WriteBatch {
        var batch = DiskLRUCache.WriteBatch()
        for i in keys { batch.setData(pair("\(value)\(i)"), forKey: "k\(i)") }
        for key in removed { batch.removeValue(forKey: key) }
        return batch
    }

    var journalURL: URL { directory.url.appending(path: "journal") }

    @Test(arguments: bothStorages)
    func aBatchSetsAndRemovesInOrderAndReopens(storage: DiskLRUCache.Storage) throws {
        let cache = try open(storage)
        try cache.setData(pair("old"), forKey: "gone")
        var batch = batch(keys: 0..<5, value: "v", removing: ["gone", "never-there"])
        batch.setData(pair("first"), forKey: "twice")
        batch.setData(pair("second"), forKey: "twice")
        batch.setData(pair("back"), forKey: "k9")
        batch.removeValue(forKey: "k9")
        #expect(batch.count == 11)
        try cache.write(batch)
        func check(_ cache: DiskLRUCache) throws {
            for i in 0..<5 { #expect(try cache.data(forKey: "k\(i)") == pair("v\(i)")) }
            #expect(try cache.data(forKey: "gone") == nil)
            #expect(try cache.data(forKey: "twice") == pair("second"))
            #expect(try cache.data(forKey: "k9") == nil)
            #expect(cache.count == 6)
        }
        try check(cache)
        cache.simulateCrash()
        try check(try open(storage))
    }

    @Test(arguments: bothStorages)
    func aKeyRemovedSetAndRemovedAgainInOneBatchIsRemovedOnce(storage: DiskLRUCache.Storage) throws {
        let cache = try open(storage)
        for key in ["a", "b", "c"] { try cache.setData(pair("old-\(key)"), forKey: key) }
        var batch = DiskLRUCache.WriteBatch()
        for key in ["a", "b"] { batch.removeValue(forKey: key) }
        batch.setData(pair("new-a"), forKey: "a")
        batch.setData(pair("new-b"), forKey: "b")
        batch.removeValue(forKey: "a")
        batch.removeValue(forKey: "c")
        // Many removals and sets of other keys: O(members), not O(members²).
        for i in 0..<2_000 { batch.setData(pair("n\(i)"), forKey: "n\(i)") }
        for i in 0..<2_000 { batch.removeValue(forKey: "n\(i)") }
        let removalsBefore = cache.statistics.removeCount
        try cache.write(batch)
        func check(_ cache: DiskLRUCache) throws {
            #expect(try cache.data(forKey: "a") == nil)
            #expect(try cache.data(forKey: "b") == pair("new-b"))
            #expect(try cache.data(forKey: "c") == nil)
            #expect(try cache.data(forKey: "n7") == nil)
            #expect(cache.count == 1)
        }
        try check(cache)
        if storage == .packed { #expect(cache.statistics.removeCount - removalsBefore == 2_002) }
        cache.simulateCrash()
        try check(try open(storage))
    }

    @Test func aPackedBatchIsOneJournalLineUnderTheMagicEarlierReleasesRefuse() throws {
        let cache = try open()
        try cache.setData(pair("before"), forKey: "before")
        #expect(try JournalFixture.allLines(in: directory.url).first == JournalFixture.packedMagic)
        try cache.write(batch(keys: 0..<100, value: "v", removing: ["before"]))
        let lines = try JournalFixture.allLines(in: directory.url)
        #expect(lines.first == JournalFixture.packedBatchMagic)
        #expect(lines.last?.hasPrefix("BATCH\tCLEAN k0 ") == true)
        #expect(lines.last?.components(separatedBy: "\t").count == 102)
        // File storage keeps the Java format: a line per change, the Java magic.
    }

    @Test func fileStorageKeepsTheJavaJournal() throws {
        let cache = try open(.files)
        try cache.write(batch(keys: 0..<3, value: "v"))
        let lines = try JournalFixture.allLines(in: directory.url)
        #expect(lines.first == JournalFixture.magic)
        #expect(!lines.contains { $0.hasPrefix("BATCH") })
        #expect(lines.filter { $0.hasPrefix("CLEAN ") }.count == 3)
    }

    @Test func aDurableBatchCostsTheSyncsOfOneCommit() throws {
        let cache = try open(syncsWrites: true)
        try cache.write(batch(keys: 0..<1, value: "w"))
        let before = fileSystem.calls(to: "fsync")
        try cache.write(batch(keys: 0..<500, value: "v", removing: ["k0"]))
        // The segment its records and removals are logged in: as one `setData`.
        #expect(fileSystem.calls(to: "fsync") - before == 1)
        cache.simulateCrash()
        let reopened = try open()
        #expect(reopened.count == 499)
        #expect(try reopened.data(forKey: "k499") == pair("v499"))
    }

    /// A kill in the middle of the journal's write leaves a torn last line: none of the batch.
    @Test func aTornBatchLineLeavesNoneOfTheBatch() throws {
        let cache = try open()
        for i in 0..<10 { try cache.setData(pair("old\(i)"), forKey: "k\(i)") }
        try cache.write(batch(keys: 0..<1, value: "x"))  // the journal takes the batch magic
        try cache.flush()
        let size = try Data(contentsOf: journalURL).count
        try cache.write(batch(keys: 0..<10, value: "new", removing: ["k0"]))
        cache.simulateCrash()
        let written = try Data(contentsOf: journalURL)
        for cut in [size + 1, size + (written.count - size) / 2, written.count - 1] {
            try written.prefix(cut).write(to: journalURL)
            let reopened = try open()
            #expect(try reopened.data(forKey: "k0") == pair("x0"), "cut at \(cut)")
            for i in 1..<10 { #expect(try reopened.data(forKey: "k\(i)") == pair("old\(i)"), "cut at \(cut)") }
            reopened.simulateCrash()
        }
    }

    /// A damaged batch line costs the entries it names (misses), never an older value, and
    /// nothing else.
    @Test func aDamagedBatchLineDropsWhatItNames() throws {
        let cache = try open()
        for i in 0..<10 { try cache.setData(pair("old\(i)"), forKey: "k\(i)") }
        try cache.setData(pair("other"), forKey: "other")
        try cache.write(batch(keys: 0..<5, value: "new"))
        cache.simulateCrash()
        var bytes = [UInt8](try Data(contentsOf: journalURL))
        let lineStart = try #require(
            bytes.indices.last { bytes[$0] == UInt8(ascii: "B") && $0 > 0 && bytes[$0 - 1] == UInt8(ascii: "\n") })
        bytes[lineStart + 40] ^= 0x01
        try Data(bytes).write(to: journalURL)
        let reopened = try open()
        for i in 0..<5 {
            let values = try reopened.data(forKey: "k\(i)")
            #expect(values == nil || values == pair("new\(i)"), "k\(i) holds an older value")
        }
        for i in 5..<10 { #expect(try reopened.data(forKey: "k\(i)") == pair("old\(i)")) }
        #expect(try reopened.data(forKey: "other") == pair("other"))
    }

    @Test func aBatchIsCheckedWholeBeforeAnythingIsWritten() throws {
        let cache = try open()
        var bad = batch(keys: 0..<3, value: "v")
        bad.setData(pair("x"), forKey: "Not A Key")
        expectError(.invalidKey) { try cache.write(bad) }
        var wrongCount = batch(keys: 0..<3, value: "v")
        wrongCount.setData([Data()], forKey: "short")
        expectError(.wrongValueCount) { try cache.write(wrongCount) }
        let editor = try #require(try cache.edit(forKey: "k2"))
        expectError(.editInProgress) { try cache.write(batch(keys: 0..<3, value: "v")) }
        editor.abort()
        #expect(cache.count == 0)
        try cache.write(DiskLRUCache.WriteBatch())
        #expect(cache.count == 0)
    }

    @Test func valuesTooLargeToBeInlineAreWrittenOneEntryAtATime() throws {
        let cache = try open(.packed(inlineLimit: 8))
        var batch = DiskLRUCache.WriteBatch()
        batch.setData([Data("small".utf8), Data(repeating: 7, count: 100)], forKey: "large")
        batch.setData([Data("a".utf8), Data("b".utf8)], forKey: "small")
        try cache.write(batch)
        #expect(try cache.data(forKey: "large") == [Data("small".utf8), Data(repeating: 7, count: 100)])
        #expect(try cache.data(forKey: "small") == [Data("a".utf8), Data("b".utf8)])
        #expect(try !JournalFixture.allLines(in: directory.url).contains { $0.hasPrefix("BATCH") })
    }

    @Test func aFailedBatchLeavesEachKeyOldOrGoneAndTheJournalRepairs() throws {
        let cache = try open()
        for i in 0..<4 { try cache.setData(pair("old\(i)"), forKey: "k\(i)") }
        try cache.write(batch(keys: 0..<1, value: "old"))
        // The records' write succeeds; the journal's fails.
        fileSystem.failCall(named: "write", occurrence: 2, errno: EIO)
        expectError(.ioFailure) { try cache.write(batch(keys: 0..<4, value: "new", removing: ["k3"])) }
        for i in 0..<4 {
            let values = try cache.data(forKey: "k\(i)")
            #expect(values == nil || values == pair("old\(i)"))
        }
        let afterFailure = try (0..<4).map { try cache.data(forKey: "k\($0)") }
        try cache.write(batch(keys: 10..<12, value: "later"))
        cache.simulateCrash()
        let reopened = try open()
        #expect(try (0..<4).map { try reopened.data(forKey: "k\($0)") } == afterFailure)
        #expect(try reopened.data(forKey: "k11") == pair("later11"))
    }

    @Test func changesReportEveryEntryOfABatch() async throws {
        let cache = try open()
        try await cache.setData(pair("old"), forKey: "gone")
        let changes = cache.changes()
        try await cache.write(batch(keys: 0..<2, value: "v", removing: ["gone"]))
        var seen: [String: CacheChange.Kind] = [:]
        for await change in changes {
            if let key = change.key { seen[key] = change.kind }
            if seen.count == 3 { break }
        }
        #expect(seen == ["k0": .committed, "k1": .committed, "gone": .removed])
    }
}
