import Foundation
import SwiftyCacheTestSupport
import Testing

@testable import SwiftyCacheCore

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The journal must match the Java DiskLruCache byte for byte.
@Suite struct JournalFormatTests {
    let directory = TemporaryDirectory()

    @Test func emptyCacheHasOnlyTheHeader() throws {
        let cache = try openCache(directory.url)
        try cache.close()
        let bytes = try Data(contentsOf: directory.appending("journal"))
        #expect(String(decoding: bytes, as: UTF8.self) == "libcore.io.DiskLruCache\n1\n100\n2\n\n")
    }

    @Test func scriptedSequenceProducesExactJournalBytes() throws {
        let cache = try openCache(directory.url)
        try cache.set("k1", "AB", "C")  // DIRTY, CLEAN
        try cache.set("k2", "DEF", "G")
        _ = try cache.data(forKey: "k1")  // READ
        try cache.setPartialData([1: Data("XYZW".utf8)], forKey: "k2")  // partial edit
        let editor = try #require(try cache.edit("k1"))
        try editor.setData(Data("nope".utf8), at: 0)
        editor.abort()  // abort of an existing entry: CLEAN with old lengths
        let creator = try #require(try cache.edit("k3"))
        creator.abort()  // abort of a new entry: REMOVE
        try cache.remove("k2")
        _ = try cache.data(forKey: "absent")  // a miss writes nothing
        try cache.close()
        let expected = """
            libcore.io.DiskLruCache
            1
            100
            2

            DIRTY k1
            CLEAN k1 2 1
            DIRTY k2
            CLEAN k2 3 1
            READ k1
            DIRTY k2
            CLEAN k2 3 4
            DIRTY k1
            CLEAN k1 2 1
            DIRTY k3
            REMOVE k3
            REMOVE k2

            """
        #expect(String(decoding: try Data(contentsOf: directory.appending("journal")), as: UTF8.self) == expected)
        #expect(
            try JournalFixture.fileNames(in: directory.url) == [
                "journal", "journal.clean", "journal.lock", "k1.0", "k1.1",
            ])
        #expect(try JournalFixture.readFile("k1.0", in: directory.url) == "AB")
    }

    @Test func dirtyLineIsOnDiskAsSoonAsAnEditStarts() throws {
        let cache = try openCache(directory.url)
        let editor = try #require(try cache.edit("k1"))
        try expectJournal(directory.url, ["DIRTY k1"])
        try editor.setData(Data("AB".utf8), at: 0)
        try editor.setData(Data("C".utf8), at: 1)
        #expect(JournalFixture.fileExists("k1.0.tmp", in: directory.url))
        try editor.commit()
        // CLEAN reaches the OS on commit, before close.
        try expectJournal(directory.url, ["DIRTY k1", "CLEAN k1 2 1"])
        #expect(!JournalFixture.fileExists("k1.0.tmp", in: directory.url))
        try cache.close()
    }

    @Test func removeIsOnDiskImmediately() throws {
        let cache = try openCache(directory.url)
        try cache.set("k1", "ABC", "B")
        #expect(try JournalFixture.readFile("k1.0", in: directory.url) == "ABC")
        #expect(try cache.remove("k1"))
        #expect(!JournalFixture.fileExists("k1.0", in: directory.url))
        try expectJournal(directory.url, ["DIRTY k1", "CLEAN k1 3 1", "REMOVE k1"])
        #expect(try cache.remove("k1") == false)
    }

    @Test func closeRevertsAnUnfinishedEdit() throws {
        let cache = try openCache(directory.url)
        let editor = try #require(try cache.edit("k1"))
        try editor.setData(Data("A".utf8), at: 0)
        try cache.close()
        try expectJournal(directory.url, ["DIRTY k1", "REMOVE k1"])
        #expect(!JournalFixture.fileExists("k1.0.tmp", in: directory.url))
        expectError(.cacheClosed) { try editor.commit() }
    }

    @Test func readOfUnpublishedValueIsNotJournaled() throws {
        let cache = try openCache(directory.url)
        let creator = try #require(try cache.edit("k1"))
        #expect(try cache.snapshot(forKey: "k1") == nil)
        try creator.setData(Data("A".utf8), at: 0)
        try creator.setData(Data("BC".utf8), at: 1)
        try creator.commit()
        try cache.close()
        try expectJournal(directory.url, ["DIRTY k1", "CLEAN k1 1 2"])
    }

    @Test(arguments: [
        "", "has_space ", "has_CR\r", "has_LF\n", "has/slash", "..", "../escape", "UPPER", "snowman\u{2603}",
        "é", "dot.key", String(repeating: "a", count: 121),
    ])
    func invalidKeysAreRejectedBeforeTouchingTheDisk(key: String) throws {
        let cache = try openCache(directory.url)
        expectError(.invalidKey) { try cache.edit(key) }
        expectError(.invalidKey) { try cache.setData([Data(), Data()], forKey: key) }
        // Keys a Java-written journal may hold can be read and removed (here: misses); keys that
        // could name a path outside the directory, or hold a space or a control byte, cannot.
        if ["UPPER", "dot.key", String(repeating: "a", count: 121)].contains(key) {
            #expect(try cache.snapshot(forKey: key) == nil)
            #expect(try !cache.remove(key))
        } else {
            expectError(.invalidKey) { try cache.snapshot(forKey: key) }
            expectError(.invalidKey) { try cache.remove(key) }
        }
        try cache.close()
        try expectJournal(directory.url, [])
    }

    @Test func keysOnlyAJavaWrittenJournalHoldsCanBeReadAndRemoved() throws {
        try JournalFixture.write(["CLEAN Upper.Case 1 2"], to: directory.url)
        try JournalFixture.writeFile("Upper.Case.0", "A", in: directory.url)
        try JournalFixture.writeFile("Upper.Case.1", "BC", in: directory.url)
        let cache = try openCache(directory.url)
        #expect(try cache.keys() == ["Upper.Case"])
        #expect(try cache.strings("Upper.Case") == ["A", "BC"])
        expectError(.invalidKey) { try cache.set("Upper.Case", "x", "y") }
        #expect(try cache.remove("Upper.Case"))
        #expect(try JournalFixture.fileNames(in: directory.url) == ["journal", "journal.lock"])
    }

    @Test func validKeysOfEveryAllowedCharacterAndMaximumLength() throws {
        let cache = try openCache(directory.url)
        for key in [String(repeating: "a", count: 120), "abcdefghijklmnopqrstuvwxyz_0123456789", "-20384573948576"] {
            try cache.set(key, "x", "y")
            #expect(try cache.strings(key) == ["x", "y"])
        }
    }

    @Test func invalidKeyErrorNamesTheKey() throws {
        let cache = try openCache(directory.url)
        do {
            _ = try cache.edit("Bad Key")
            Issue.record("no error")
        } catch let error as CacheError {
            #expect(error.key == "Bad Key")
            #expect(error.operation == "edit")
            #expect(error.description.contains("Bad Key"))
        }
    }
}

@Suite struct DeferredDirtyTests {
    let directory = TemporaryDirectory()

    /// `DIRTY` reaches the journal file before the first staged file is created, as the Java
    /// cache does: the staged file's creation fails here, and the journal already holds DIRTY.
    @Test func aOneShotWriteJournalsDirtyBeforeItsFirstStagedFile() throws {
        let fileSystem = FaultInjectingFileSystem()
        let cache = try DiskLRUCache(
            directory: directory.url, appVersion: testAppVersion, valueCount: 2, maxSize: 100, fileSystem: fileSystem)
        try cache.set("old", "A", "B")
        fileSystem.failCalls(named: ["open"], errno: EIO, pathContaining: ".tmp")
        expectError(.ioFailure) { try cache.set("new", "C", "D") }
        expectError(.ioFailure) { try cache.set("old", "E", "F") }
        fileSystem.heal()
        // A failed write of a new key ends with REMOVE, of an existing one with its old CLEAN line.
        try expectJournal(
            directory.url,
            ["DIRTY old", "CLEAN old 1 1", "DIRTY new", "REMOVE new", "DIRTY old", "CLEAN old 1 1"])
        #expect(try cache.strings("old") == ["A", "B"])
    }

    @Test func rebuildWritesCleanForAOneShotEditNotYetJournaled() throws {
        let cacheDirectory = CacheDirectory(fileSystem: SystemFileSystem(), path: directory.path)
        try cacheDirectory.create()
        var state = CacheState(
            directory: cacheDirectory,
            storage: FileStorage(directory: cacheDirectory, valueCount: 2, syncsWrites: false),
            journal: JournalWriter(
                directory: cacheDirectory, appVersion: testAppVersion, valueCount: 2, syncsWrites: false),
            maxSize: 100)
        let old = state.table.insert(key: "old", valueCount: 2)
        state.table.setReadable(old, true)
        state.table.setLengths(old, [1, 2])
        state.table.setEditor(old, 7)  // a one-shot edit in progress: DIRTY deferred
        let new = state.table.insert(key: "new", valueCount: 2)
        state.table.setEditor(new, 8)  // a new entry's one-shot edit: nothing journaled yet
        let edited = state.table.insert(key: "edited", valueCount: 2)
        state.table.setEditor(edited, 9)
        state.table.setDirtyJournaled(edited, true)  // an editor: DIRTY already out
        try state.rebuildJournal()
        #expect(try JournalFixture.bodyLines(in: directory.url) == ["CLEAN old 1 2", "DIRTY edited"])
    }

    @Test func valueFilePathsBuiltOnTheStackMatchTheNamingScheme() throws {
        let storage = FileStorage(
            directory: CacheDirectory(fileSystem: SystemFileSystem(), path: "/var/cache/my app"), valueCount: 2,
            syncsWrites: false)
        let longKey = String(repeating: "k", count: 120)
        for key in ["a", "key-1_x", longKey] {
            for slot in [0, 1, 9, 10, 99, 100, 12_345, Int.max] {
                for temporary in [false, true] {
                    let built = storage.withSlotPath(key, slot, temporary: temporary) { String(cString: $0) }
                    let expected = "/var/cache/my app/\(key).\(slot)" + (temporary ? ".tmp" : "")
                    #expect(built == expected)
                    #expect(built == storage.path(key: key, slot: slot, staged: temporary))
                }
            }
        }
    }
}
