import Foundation
import SwiftyCacheCore
import SwiftyCacheTestSupport
import Testing

/// `Options(readOnly: true)`: reads from the journal as it was, writes nothing, and shares the
/// directory with a writer.
@Suite(.tags(.concurrency)) struct ReadOnlyTests {
    let directory = TemporaryDirectory()

    func openReader() throws -> DiskLRUCache {
        try DiskLRUCache(
            directory: directory.url, appVersion: testAppVersion, valueCount: 2, maxSize: 10,
            options: DiskLRUCache.Options(isReadOnly: true))
    }

    /// Every file's name and bytes.
    func snapshotOfTheDirectory() throws -> [String: Data] {
        var files: [String: Data] = [:]
        for name in try JournalFixture.fileNames(in: directory.url) {
            files[name] = try Data(contentsOf: directory.appending(name))
        }
        return files
    }

    @Test func aReaderReadsBesideAWriterAndWritesNothing() throws {
        let writer = try openCache(directory.url)
        try writer.set("k1", "A", "BC")
        try writer.set("k2", "D", "E")
        let before = try snapshotOfTheDirectory()
        let reader = try openReader()  // no directoryLocked: readers take no lock
        #expect(try reader.keys() == ["k1", "k2"])
        #expect(try reader.strings("k1") == ["A", "BC"])
        #expect(reader.size == 5)
        if let snapshot = try reader.snapshot(forKey: "k2") {
            #expect(try snapshot.readString(at: 0) == "D")
            expectError(.readOnly) { try snapshot.edit() }
        } else {
            Issue.record("no snapshot of k2")
        }
        expectError(.readOnly) { try reader.set("k3", "x", "y") }
        expectError(.readOnly) { try reader.setPartialData([0: Data("x".utf8)], forKey: "k1") }
        expectError(.readOnly) { try reader.edit(forKey: "k1") }
        expectError(.readOnly) { try reader.removeValue(forKey: "k1") }
        expectError(.readOnly) { try reader.evictAll() }
        expectError(.readOnly) { try reader.flush() }
        expectError(.readOnly) { try reader.setMaxSize(1) }
        expectError(.readOnly) { try reader.delete() }
        try reader.close()
        // Not a byte changed: no READ line, no eviction (maxSize 10 < 5 + more), no lock file.
        #expect(try snapshotOfTheDirectory() == before)
        try writer.close()
    }

    @Test func theWritersLaterChangesAreMissesUntilRefresh() throws {
        let writer = try openCache(directory.url)
        try writer.set("k1", "old", "old")
        try writer.set("k2", "two", "two")
        let reader = try openReader()
        try writer.set("k1", "new", "new")  // same lengths, other bytes: must not be read as old
        #expect(try writer.removeValue(forKey: "k2"))
        try writer.set("k3", "three", "3")
        #expect(try reader.strings("k1") == nil)
        #expect(try reader.strings("k2") == nil)
        #expect(try reader.strings("k3") == nil)
        try reader.refresh()
        #expect(try reader.strings("k1") == ["new", "new"])
        #expect(try reader.strings("k2") == nil)
        #expect(try reader.strings("k3") == ["three", "3"])
        #expect(try reader.keys() == ["k1", "k3"])
    }

    @Test func aReaderFollowsTheWritersJournalCompaction() throws {
        let writer = try openCache(directory.url)
        try writer.set("stable", "s", "t")
        let reader = try openReader()
        let journalPath = directory.appending("journal").path(percentEncoded: false)
        let inodeBefore = try FileManager.default.attributesOfItem(atPath: journalPath)[.systemFileNumber] as? Int
        // Enough overwrites of another key for the writer to rebuild its journal.
        for round in 0..<2_100 { try writer.set("busy", "\(round % 10)", "x") }
        writer.waitForBackgroundWork()
        try writer.flush()
        let inodeAfter = try FileManager.default.attributesOfItem(atPath: journalPath)[.systemFileNumber] as? Int
        #expect(inodeBefore != inodeAfter)  // rebuilt: a new file replaced the one the reader read
        #expect(try reader.strings("stable") == ["s", "t"])
        #expect(try reader.strings("busy") != nil)  // the new journal was read
    }

    @Test func aReaderNeedsAnExistingDirectoryAndCreatesNone() throws {
        let missing = directory.appending("not-there")
        expectError(.invalidConfiguration) {
            try DiskLRUCache(
                directory: missing, appVersion: 1, valueCount: 1, maxSize: 10,
                options: DiskLRUCache.Options(isReadOnly: true))
        }
        #expect(!FileManager.default.fileExists(atPath: missing.path(percentEncoded: false)))
    }

    @Test func aReaderOfAnEmptyDirectoryIsEmptyUntilAWriterCommitsAndItRefreshes() throws {
        let reader = try openReader()
        #expect(reader.count == 0)
        #expect(try JournalFixture.fileNames(in: directory.url) == [])
        let writer = try openCache(directory.url)
        try writer.set("k", "v", "w")
        try reader.refresh()
        #expect(try reader.strings("k") == ["v", "w"])
    }

    @Test func aReaderOfACorruptJournalReadsEmptyAndDeletesNothing() throws {
        try JournalFixture.write(["CLEAN k1 1 1", "BOGUS"], to: directory.url)
        try JournalFixture.writeFile("k1.0", "A", in: directory.url)
        try JournalFixture.writeFile("k1.1", "B", in: directory.url)
        let before = try snapshotOfTheDirectory()
        let reader = try openReader()
        #expect(reader.recoveryReport.wasWiped)
        #expect(reader.count == 0)
        #expect(try snapshotOfTheDirectory() == before)
    }
}
