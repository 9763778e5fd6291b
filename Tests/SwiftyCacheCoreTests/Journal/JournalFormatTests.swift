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
        let editor = try #require(try cache.edit(forKey: "k1"))
        try editor.setData(Data("nope".utf8), at: 0)
        editor.abort()  // abort of an existing entry: CLEAN with old lengths
        let creator = try #require(try cache.edit(forKey: "k3"))
        creator.abort()  // abort of a new entry: REMOVE
        try cache.removeValue(forKey: "k2")
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
        let editor = try #require(try cache.edit(forKey: "k1"))
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
        #expect(try cache.removeValue(forKey: "k1"))
        #expect(!JournalFixture.fileExists("k1.0", in: directory.url))
        try expectJournal(directory.url, ["DIRTY k1", "CLEAN k1 3 1", "REMOVE k1"])
        #expect(try cache.removeValue(forKey: "k1") == false)
    }

    @Test func closeRevertsAnUnfinishedEdit() throws {
        let cache = try openCache(directory.url)
        let editor = try #require(try cache.edit(forKey: "k1"))
        try editor.setData(Data("A".utf8), at: 0)
        try cache.close()
        try expectJournal(directory.url, ["DIRTY k1", "REMOVE k1"])
        #expect(!JournalFixture.fileExists("k1.0.tmp", in: directory.url))
        expectError(.cacheClosed) { try editor.commit() }
    }

    @Test func readOfUnpublishedValueIsNotJournaled() throws {
        let cache = try openCache(directory.url)
        let creator = try #require(try cache.edit(forKey: "k1"))
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
        expectError(.invalidKey) { try cache.edit(forKey: key) }
        expectError(.invalidKey) { try cache.setData([Data(), Data()], forKey: key) }
        // Keys a Java-written journal may hold can be read and removed (here: misses); keys that
        // could name a path outside the directory, or hold a space or a control byte, cannot.
        if ["UPPER", "dot.key", String(repeating: "a", count: 121)].contains(key) {
            #expect(try cache.snapshot(forKey: key) == nil)
            #expect(try !cache.removeValue(forKey: key))
        } else {
            expectError(.invalidKey) { try cache.snapshot(forKey: key) }
            expectError(.invalidKey) { try cache.removeValue(forKey: key) }
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
        #expect(try cache.removeValue(forKey: "Upper.Case"))
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
            _ = try cache.edit(forKey: "Bad Key")
            Issue.record("no error")
        } catch let error as CacheError {
            #expect(error.key == "Bad Key")
            #expect(error.operation == .edit)
            #expect(error.description.contains("Bad Key"))
        }
    }
}
