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

    /// After a wipe: the journal's keys' files are gone (the garbage's `b.1`, named by the
    /// journals below), the user's `a.0` and `dir` stay and are reported.
    private func expectOnlyTheCachesFilesDeleted(_ cache: DiskLRUCache) throws {
        #expect(try JournalFixture.fileNames(in: url) == ["a.0", "dir", "journal", "journal.lock"])
        #expect(try JournalFixture.readFile("dir/file", in: url) == "garbage")
        #expect(cache.recoveryReport.unknownFiles == ["a.0", "dir"])
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
        #expect(try first.removeValue(forKey: "k2"))
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
    ])
    func mismatchedHeaderDeletesOnlyTheCachesFiles(header: [String]) throws {
        try writeGarbage()
        try JournalFixture.write(["CLEAN b 7 7", "CLEAN k 1 1"], to: url, header: header)
        try JournalFixture.writeFile("k.0", "x", in: url)
        let cache = try openCache(url)
        #expect(cache.recoveryReport.wasWiped)
        try expectOnlyTheCachesFilesDeleted(cache)
        try expectJournal(url, [])
        try cache.set("b", "works", "again")
        #expect(try cache.strings("b") == ["works", "again"])
    }

    @Test(arguments: [
        "BOGUS", "CLEAN k1 0000x001 1", "CLEAN k1 1 1 1", "CLEAN k1 1", "CLEAN k1 -1 2", "DIRTY", "DIRTY  k1",
        "REMOVE k1 extra", "READ", "CLEAN k1 99999999999999999999 1", "CLEAN ../x 1 1", "CLEAN .. 1 1",
        "DIRTY k1 ", "CLEAN k1\t1 1", "CLEAN k1 1  1",
    ])
    func corruptLineDeletesOnlyTheCachesFiles(line: String) throws {
        try writeGarbage()
        try JournalFixture.write(["CLEAN k1 1 1", line, "CLEAN b 1 1"], to: url)
        let cache = try openCache(url)
        #expect(cache.recoveryReport.wasWiped)
        #expect(cache.recoveryReport.wipeReason?.contains("unexpected journal line") == true)
        try expectOnlyTheCachesFilesDeleted(cache)
        #expect(try cache.snapshot(forKey: "k1") == nil)
        #expect(cache.count == 0)
    }

    /// Lines the Java DiskLruCache replays (CRLF, spaces after the lengths, `+` signs, lengths
    /// up to Long.MAX_VALUE, keys wider than the API's) are replayed with the same entries.
    @Test(arguments: [
        ("CLEAN k1 1 1\r", "k1", [1, 1]),
        ("CLEAN k1 1 1 ", "k1", [1, 1]),
        ("CLEAN k1 1 1   ", "k1", [1, 1]),
        ("CLEAN k1 +1 1", "k1", [1, 1]),
        ("CLEAN k1 -0 1", "k1", [0, 1]),
        ("CLEAN K1 1 1", "K1", [1, 1]),
        ("CLEAN a.b 1 1", "a.b", [1, 1]),
        ("CLEAN k1 1000000000000000000 1", "k1", [1_000_000_000_000_000_000, 1]),
        ("CLEAN k1 +9223372036854775000 1", "k1", [9_223_372_036_854_775_000, 1]),
    ])
    func linesJavaReplaysAreReplayedTheSame(line: String, key: String, lengths: [Int]) throws {
        try JournalFixture.write(["CLEAN b 1 1", line], to: url)
        let cache = try openCache(url)
        #expect(!cache.recoveryReport.wasWiped)
        #expect(cache.count == 2)
        #expect(try cache.keys() == ["b", key])
        #expect(cache.size == 2 + lengths.reduce(0, +))
    }

    @Test func aCRLFJournalIsReplayed() throws {
        let text = "libcore.io.DiskLruCache\r\n1\r\n100\r\n2\r\n\r\nCLEAN k1 1 2\r\nREAD k1\r\n"
        try Data(text.utf8).write(to: url.appending(path: "journal"))
        try JournalFixture.writeFile("k1.0", "A", in: url)
        try JournalFixture.writeFile("k1.1", "BC", in: url)
        let cache = try openCache(url)
        #expect(!cache.recoveryReport.wasWiped)
        #expect(try cache.strings("k1") == ["A", "BC"])
    }

    @Test func lengthsThatAddUpPastIntMaxAreACorruptJournalNotATrap() throws {
        let huge = "999999999999999999"  // 18 digits: each fits, six of them do not add up
        try JournalFixture.write((1...6).map { "CLEAN k\($0) \(huge) \(huge)" }, to: url)
        let cache = try openCache(url)
        #expect(cache.recoveryReport.wasWiped)
        #expect(cache.count == 0)
        try cache.close()
        #expect(try openCache(url, maxSize: 10).count == 0)  // and every later open works too
    }

    @Test(arguments: [
        Data("<html><body>my notes</body></html>\n".utf8),
        Data("libcore.io.DiskLruCachX\n1\n100\n2\n\n".utf8),
        Data("{\"journal\": true}".utf8),
    ])
    func aFileCalledJournalThatIsNotOneTouchesNothing(contents: Data) throws {
        try writeGarbage()
        try contents.write(to: url.appending(path: "journal"))
        do {
            _ = try openCache(url)
            Issue.record("opened a directory whose journal is not a DiskLruCache journal")
        } catch let error as CacheError {
            #expect(error.code == .notACacheDirectory)
            #expect(error.path?.hasSuffix("/journal") == true)
        }
        #expect(try JournalFixture.fileNames(in: url) == ["a.0", "b.1", "dir", "journal"])
        #expect(try Data(contentsOf: url.appending(path: "journal")) == contents)
    }

    @Test(arguments: [Data(), Data(repeating: 0, count: 4096), Data("libcore.io.Disk".utf8)])
    func anEmptyOrDamagedJournalIsReplacedKeepingOtherFiles(contents: Data) throws {
        try writeGarbage()
        try contents.write(to: url.appending(path: "journal"))
        let cache = try openCache(url)
        #expect(cache.recoveryReport.wasWiped)
        #expect(try JournalFixture.fileNames(in: url) == ["a.0", "b.1", "dir", "journal", "journal.lock"])
        try expectJournal(url, [])
    }

    @Test func withoutAJournalNoFileIsDeleted() throws {
        try JournalFixture.writeFile("notes.0", "mine", in: url)
        try JournalFixture.writeFile("draft.1", "mine too", in: url)
        try JournalFixture.writeFile("draft.1.tmp", "and this", in: url)
        let cache = try openCache(url)
        #expect(cache.recoveryReport.unknownFiles == ["draft.1", "draft.1.tmp", "notes.0"])
        #expect(cache.recoveryReport.removedStrayFiles == 0)
        // A key whose value file would replace one of them is refused.
        expectError(.foreignFile) { try cache.set("notes", "x", "y") }
        try cache.set("other", "x", "y")
        #expect(try JournalFixture.readFile("notes.0", in: url) == "mine")
        #expect(try JournalFixture.readFile("draft.1.tmp", in: url) == "and this")
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
        // As a writer leaves it: DIRTY went out before the files, the CLEAN line is torn.
        try JournalFixture.write(["CLEAN k2 1 1", "DIRTY k1", "CLEAN k1 1 1"], to: url, terminated: false)
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

    @Test func filesOfAKeyNamedOnlyByATornLineAreLeftAlone() throws {
        try JournalFixture.writeFile("k1.0", "A", in: url)
        try JournalFixture.write(["CLEAN k1 1 1"], to: url, terminated: false)
        let cache = try openCache(url)
        #expect(cache.recoveryReport.rebuiltJournal)
        #expect(cache.recoveryReport.unknownFiles == ["k1.0"])
        #expect(JournalFixture.fileExists("k1.0", in: url))
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
        for name in ["k1.0.tmp", "journal.tmp", "journal.bkp.3.tmp", "ghost.0", "ghost.1", "k1.7", "k1.07"] {
            try JournalFixture.writeFile(name, "x", in: url)
        }
        try JournalFixture.writeFile("README", "not ours, left alone", in: url)
        let cache = try openCache(url)
        // The cache's: a staged value of k1, a temporary journal, a rebuild's trash, a slot of
        // k1 past valueCount. Not the cache's: names no journal line accounts for.
        #expect(cache.recoveryReport.removedStrayFiles == 4)
        #expect(cache.recoveryReport.unknownFiles == ["README", "ghost.0", "ghost.1", "k1.07"])
        #expect(
            try JournalFixture.fileNames(in: url) == [
                "README", "ghost.0", "ghost.1", "journal", "journal.lock", "k1.0", "k1.07", "k1.1",
            ])
        #expect(try cache.strings("k1") == ["A", "B"])
    }

    @Test func leftoverFilesOfARemovedKeyAreTheCachesToDelete() throws {
        try JournalFixture.write(["CLEAN gone 1 1", "REMOVE gone", "CLEAN k1 1 1"], to: url)
        for name in ["gone.0", "gone.1", "k1.0", "k1.1"] { try JournalFixture.writeFile(name, "x", in: url) }
        let cache = try openCache(url)
        #expect(cache.recoveryReport.removedStrayFiles == 2)
        #expect(cache.recoveryReport.unknownFiles == [])
        #expect(try JournalFixture.fileNames(in: url) == ["journal", "journal.lock", "k1.0", "k1.1"])
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
        try JournalFixture.writeFile("k2.0.tmp", "stray", in: url)
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
        let editor = try #require(try cache.edit(forKey: "a"))
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
        expectError(.notACacheDirectory) { try openCache(url) }
        // The planted target was neither followed nor written, and the link is still there.
        #expect(try JournalFixture.bodyLines(in: outside.url) == ["CLEAN k1 1 1"])
        #expect(try FileManager.default.destinationOfSymbolicLink(atPath: url.appending(path: "journal").path) != "")
    }

    @Test func aCleanMarkerIsVoidWhenAnotherWriterChangedTheJournalSinceTheClose() throws {
        let first = try openCache(url)
        try first.set("k1", "A", "B")
        try first.close()
        #expect(JournalFixture.fileExists("journal.clean", in: url))
        // The Java cache, opening after our clean close, appends a line and leaves a stale
        // temporary journal; our marker still sits there.
        let handle = try FileHandle(forWritingTo: url.appending(path: "journal"))
        try handle.seekToEnd()
        try handle.write(contentsOf: Data("READ k1\n".utf8))
        try handle.close()
        try JournalFixture.writeFile("journal.tmp", "stale", in: url)
        let second = try openCache(url)
        #expect(second.recoveryReport.sweptDirectory)
        #expect(!JournalFixture.fileExists("journal.tmp", in: url))
        #expect(try second.strings("k1") == ["A", "B"])
    }
}
