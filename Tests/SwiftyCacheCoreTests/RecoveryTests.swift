import Foundation
import SwiftyCacheCore
import SwiftyCacheTestSupport
import Testing

/// Opening directories left in every state: by a clean close, a crash, a torn write, a foreign
/// writer (the Java cache) or damage.
@Suite struct RecoveryTests {
    let directory = TemporaryDirectory()
    var url: URL { directory.url }

    private func writeGarbage() throws {
        try JournalFixture.writeFile("a.0", "garbage", in: url)
        try JournalFixture.writeFile("b.1", "garbage", in: url)
        try FileManager.default.createDirectory(at: url.appending(path: "dir"), withIntermediateDirectories: true)
        try JournalFixture.writeFile("dir/file", "garbage", in: url)
    }

    private func expectGarbageDeleted() throws {
        #expect(try JournalFixture.fileNames(in: url) == ["journal", "journal.lock"])
    }

    @Test func journalWrittenByJavaDiskLruCacheOpensAndReadsSameBytes() throws {
        // The layout the Java cache leaves: no lock file, values as key.N.
        try JournalFixture.write(
            ["DIRTY k1", "CLEAN k1 3 2", "DIRTY k2", "CLEAN k2 1 4", "READ k1", "DIRTY k3", "REMOVE k3"], to: url)
        try JournalFixture.writeFile("k1.0", "abc", in: url)
        try JournalFixture.writeFile("k1.1", "de", in: url)
        try JournalFixture.writeFile("k2.0", "f", in: url)
        try JournalFixture.writeFile("k2.1", "ghij", in: url)
        let cache = try openCache(url)
        var expected = RecoveryReport()
        expected.sweptDirectory = true  // the Java cache leaves no clean marker
        #expect(cache.recoveryReport == expected)
        // Replay restores LRU order: the READ made k1 the most recently used.
        #expect(try cache.keys() == ["k2", "k1"])
        #expect(try cache.strings("k1") == ["abc", "de"])
        #expect(try cache.strings("k2") == ["f", "ghij"])
        #expect(cache.size == 10)
        #expect(cache.count == 2)
        #expect(try cache.keys() == ["k1", "k2"])
    }

    @Test func reopenWithoutCloseKeepsCommittedEntries() throws {
        let first = try openCache(url)
        try first.set("k1", "A", "B")
        try first.set("k2", "C", "D")
        #expect(try first.remove("k2"))
        _ = try first.strings("k1")  // a READ line, still buffered when the process dies
        #expect(
            try JournalFixture.bodyLines(in: url) == [
                "DIRTY k1", "CLEAN k1 1 1", "DIRTY k2", "CLEAN k2 1 1", "REMOVE k2",
            ])
        // A crash: nothing buffered is written, no clean marker is left, the lock goes with the
        // process. close() is never called.
        first.simulateCrash()
        #expect(!JournalFixture.fileExists("journal.clean", in: url))
        let second = try openCache(url)
        #expect(second.recoveryReport.sweptDirectory)  // no marker: the crash is noticed
        #expect(!second.recoveryReport.wasWiped)
        #expect(try second.strings("k1") == ["A", "B"])
        #expect(try second.strings("k2") == nil)
        #expect(second.size == 2)
    }

    @Test func crashedEditDeletesAllFilesOfThatKey() throws {
        try JournalFixture.write(["CLEAN k1 1 1", "DIRTY k1"], to: url)
        for name in ["k1.0", "k1.1", "k1.0.tmp", "k1.1.tmp"] { try JournalFixture.writeFile(name, "x", in: url) }
        let cache = try openCache(url)
        #expect(cache.recoveryReport.droppedIncompleteEntries == 1)
        #expect(try JournalFixture.fileNames(in: url) == ["journal", "journal.lock"])
        #expect(try cache.snapshot(forKey: "k1") == nil)
        #expect(cache.size == 0)
    }

    @Test(arguments: [
        ["libcore.io.DiskLruCache", "0", "100", "2", ""],  // version
        ["libcore.io.DiskLruCache", "1", "101", "2", ""],  // appVersion
        ["libcore.io.DiskLruCache", "1", "100", "1", ""],  // valueCount
        ["libcore.io.DiskLruCache", "1", "100", "2", "x"],  // blank line
        ["libcore.io.DiskLruCachX", "1", "100", "2", ""],  // magic
    ])
    func mismatchedHeaderEmptiesTheDirectory(header: [String]) throws {
        try writeGarbage()
        try JournalFixture.write(["CLEAN a 7 7"], to: url, header: header)
        let cache = try openCache(url)
        #expect(cache.recoveryReport.wasWiped)
        try expectGarbageDeleted()
        try expectJournal(url, [])
        try cache.set("a", "works", "again")
        #expect(try cache.strings("a") == ["works", "again"])
    }

    @Test(arguments: [
        "BOGUS", "CLEAN k1 0000x001 1", "CLEAN k1 1 1 1", "CLEAN k1 1", "CLEAN k1 -1 2", "DIRTY", "DIRTY  k1",
        "REMOVE k1 extra", "READ", "CLEAN K1 1 1", "CLEAN k1 99999999999999999999 1", "CLEAN ../x 1 1",
    ])
    func corruptLineEmptiesTheDirectory(line: String) throws {
        try writeGarbage()
        try JournalFixture.write(["CLEAN k1 1 1", line, "CLEAN b 1 1"], to: url)
        let cache = try openCache(url)
        #expect(cache.recoveryReport.wasWiped)
        #expect(cache.recoveryReport.wipeReason?.contains("unexpected journal line") == true)
        try expectGarbageDeleted()
        #expect(try cache.snapshot(forKey: "k1") == nil)
        #expect(cache.count == 0)
    }

    @Test func nonUTF8JournalEmptiesTheDirectory() throws {
        var bytes = Data("libcore.io.DiskLruCache\n1\n100\n2\n\nCLEAN k".utf8)
        bytes.append(contentsOf: [0xFF, 0xFE])
        bytes.append(contentsOf: Data(" 1 1\n".utf8))
        try bytes.write(to: url.appending(path: "journal"))
        let cache = try openCache(url)
        #expect(cache.recoveryReport.wasWiped)
    }

    @Test func tornLastLineIsDiscardedAndJournalRebuilt() throws {
        try JournalFixture.writeFile("k1.0", "A", in: url)
        try JournalFixture.writeFile("k1.1", "B", in: url)
        try JournalFixture.writeFile("k2.0", "C", in: url)
        try JournalFixture.writeFile("k2.1", "D", in: url)
        try JournalFixture.write(["CLEAN k2 1 1", "CLEAN k1 1 1"], to: url, terminated: false)
        let cache = try openCache(url)
        #expect(!cache.recoveryReport.wasWiped)
        #expect(cache.recoveryReport.rebuiltJournal)
        #expect(try cache.snapshot(forKey: "k1") == nil)
        #expect(try cache.strings("k2") == ["C", "D"])
        // The unreferenced files of the torn entry are gone, and the next line is not glued to a torn one.
        #expect(!JournalFixture.fileExists("k1.0", in: url))
        try cache.set("k3", "E", "F")
        try expectJournal(url, ["CLEAN k2 1 1", "READ k2", "DIRTY k3", "CLEAN k3 1 1"])
    }

    @Test func loneBackupJournalIsPromoted() throws {
        let first = try openCache(url)
        try first.set("k1", "ABC", "DE")
        try first.close()
        try FileManager.default.moveItem(at: url.appending(path: "journal"), to: url.appending(path: "journal.bkp"))
        let cache = try openCache(url)
        #expect(cache.recoveryReport.restoredBackup)
        #expect(try cache.strings("k1") == ["ABC", "DE"])
        #expect(!JournalFixture.fileExists("journal.bkp", in: url))
        #expect(JournalFixture.fileExists("journal", in: url))
    }

    @Test func journalIsPreferredOverBackup() throws {
        let first = try openCache(url)
        try first.set("k1", "ABC", "DE")
        try first.flush()
        try FileManager.default.copyItem(at: url.appending(path: "journal"), to: url.appending(path: "journal.bkp"))
        try first.set("k2", "F", "GH")
        try first.close()
        let cache = try openCache(url)
        #expect(!cache.recoveryReport.restoredBackup)
        #expect(try cache.strings("k1") == ["ABC", "DE"])
        #expect(try cache.strings("k2") == ["F", "GH"])
        #expect(!JournalFixture.fileExists("journal.bkp", in: url))
    }

    @Test func leftoverTemporaryAndUnreferencedFilesAreRemoved() throws {
        do {
            let first = try openCache(url)
            try first.set("k1", "A", "B")
            // Released without close(): a crash, after which stray files may exist.
        }
        for name in ["k1.0.tmp", "journal.tmp", "ghost.0", "ghost.1", "k1.7"] {
            try JournalFixture.writeFile(name, "x", in: url)
        }
        try JournalFixture.writeFile("README", "not ours, left alone", in: url)
        let cache = try openCache(url)
        #expect(cache.recoveryReport.removedStrayFiles == 5)
        #expect(try JournalFixture.fileNames(in: url) == ["README", "journal", "journal.lock", "k1.0", "k1.1"])
        #expect(try cache.strings("k1") == ["A", "B"])
    }

    @Test func cleanCloseLetsTheNextOpenSkipTheSweepAndACrashDoesNot() throws {
        let first = try openCache(url)
        try first.set("k1", "A", "B")
        try first.close()
        #expect(JournalFixture.fileExists("journal.clean", in: url))
        do {
            let second = try openCache(url)
            #expect(!second.recoveryReport.sweptDirectory)
            // The marker is gone while the cache is open: a crash now must make the next open sweep.
            #expect(!JournalFixture.fileExists("journal.clean", in: url))
            try second.set("k2", "C", "D")
        }
        try JournalFixture.writeFile("k9.0.tmp", "stray", in: url)
        let third = try openCache(url)
        #expect(third.recoveryReport.sweptDirectory)
        #expect(third.recoveryReport.removedStrayFiles == 1)
        #expect(try third.keys().sorted() == ["k1", "k2"])
    }

    @Test func evictionHonorsLRUFromPreviousSession() throws {
        let first = try openCache(url)
        for key in ["a", "b", "c", "d", "e", "f"] { try first.set(key, key, key) }
        try first.snapshot(forKey: "b")?.close()  // b becomes the most recently used
        #expect(first.size == 12)
        try first.close()
        let cache = try openCache(url, maxSize: 10)
        try cache.set("g", "g", "g")
        try cache.flush()
        #expect(cache.size == 10)
        #expect(try cache.keys() == ["d", "e", "f", "b", "g"])
    }

    @Test func lruOrderInMemoryMatchesReplayAfterAbortedEdit() throws {
        let cache = try openCache(url)
        for key in ["a", "b", "c"] { try cache.set(key, key, key) }
        let editor = try #require(try cache.edit("a"))
        try cache.snapshot(forKey: "b")?.close()
        editor.abort()  // journals CLEAN a, which replay counts as a use
        let live = try cache.keys()
        #expect(live == ["c", "b", "a"])
        try cache.close()
        #expect(try openCache(url).keys() == live)
    }

    @Test func journalThatIsASymlinkIsNotFollowed() throws {
        let outside = TemporaryDirectory()
        try JournalFixture.write(["CLEAN k1 1 1"], to: outside.url)
        try FileManager.default.createSymbolicLink(
            at: url.appending(path: "journal"), withDestinationURL: outside.appending("journal"))
        let cache = try openCache(url)
        #expect(cache.recoveryReport.wasWiped)
        try cache.set("k1", "A", "B")
        // The planted target was neither followed nor written.
        #expect(try JournalFixture.bodyLines(in: outside.url) == ["CLEAN k1 1 1"])
    }
}
