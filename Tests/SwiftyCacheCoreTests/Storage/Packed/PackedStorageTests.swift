import Foundation
import SwiftyCacheCore
import SwiftyCacheTestSupport
import Testing

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Packed storage, read as the specification of its files: the segment header, the record
/// layout, the journal lines that name records; and what it promises beyond file storage:
/// checksummed reads and crash recovery of segments (compaction: `PackedCompactionTests`).
@Suite(.tags(.addressSanitized, .concurrency)) struct PackedStorageTests: PackedDirectoryTests {
    let directory = TemporaryDirectory()

    // MARK: The format

    @Test func theChecksumIsXXH64() {
        // Reference values of the xxHash project.
        #expect(XXHash64.hash([]) == 0xEF46_DB37_51D8_E999)
        #expect(XXHash64.hash(Array("abc".utf8)) == 0x44BC_2CF5_AD77_0999)
        #expect(XXHash64.hash([UInt8](repeating: UInt8(ascii: "a"), count: 31)) == 0xFE47_067C_DA80_2916)
        #expect(XXHash64.hash([UInt8](repeating: UInt8(ascii: "a"), count: 32)) == 0x856E_8432_98F9_9AD7)
        #expect(XXHash64.hash((0..<100).map { UInt8($0) }) == 0x6AC1_E580_3216_6597)
    }

    @Test func aCommitAppendsOneRecordAndTheJournalNamesIt() throws {
        let cache = try openPacked()
        try cache.set("k1", "abc", "de")
        // The segment header, then the record of the sample in PackedRecord.swift.
        let header = Array("swiftycache.seg\n".utf8)
        let record: [UInt8] = [0xD9, 0x80, 0xC5, 0x59, 0x03, 0, 0, 0, 0x02, 0, 0, 0, 0x61, 0x62, 0x63, 0x64, 0x65]
        #expect(try segmentBytes() == header + record)
        #expect(
            try JournalFixture.allLines(in: directory.url) == [
                "swiftycache.packed", "1", String(testAppVersion), "2", "16384", "",
                // The line, then its check: ` ~`, the key's tag and the line's checksum (the low
                // 32 bits of XXH64 of "k1", and of the line before ` ~` with the seed
                // 0x6A6F75726E616C21); the values agree with Python's `xxhash` package.
                "CLEAN k1 3 2 1 16 ~dff407d3314a26a7",
            ])
        #expect(
            try JournalFixture.fileNames(in: directory.url) == [
                "journal", "journal.lock", "journal.reserve", "segment-00000001.pack",
            ])
        #expect(try cache.strings("k1") == ["abc", "de"])
    }

    @Test func slotsAboveTheInlineLimitAreFilesAndTheRecordMarksThem() throws {
        let cache = try openPacked(inlineLimit: 4)
        try cache.set("k", "abcd", "longer than four")
        #expect(try JournalFixture.readFile("k.1", in: directory.url) == "longer than four")
        #expect(!JournalFixture.fileExists("k.0", in: directory.url))
        let record = Array(try segmentBytes().dropFirst(16))
        #expect(Array(record[4..<12]) == [4, 0, 0, 0, 0xFF, 0xFF, 0xFF, 0xFF])
        #expect(Array(record[12...]) == Array("abcd".utf8))
        #expect(try JournalFixture.rawBodyLines(in: directory.url) == ["DIRTY k", "CLEAN k 4 16 1 16"])
        #expect(try cache.strings("k") == ["abcd", "longer than four"])
        // Slot 1 shrinks into the record: its file goes.
        try cache.setPartialData([1: Data("tiny".utf8)], forKey: "k")
        #expect(!JournalFixture.fileExists("k.1", in: directory.url))
        #expect(try cache.strings("k") == ["abcd", "tiny"])
        // Every slot large: no record at all.
        try cache.set("big", "0123456789", "9876543210")
        #expect(try JournalFixture.rawBodyLines(in: directory.url).last == "CLEAN big 10 10 0 0")
        #expect(try cache.strings("big") == ["0123456789", "9876543210"])
    }

    @Test func aStreamedValueSpillsToAFileOnlyPastTheInlineLimit() throws {
        let cache = try openPacked(inlineLimit: 8)
        let editor = try #require(try cache.edit(forKey: "s"))
        try editor.write(at: 0) { writer in
            for _ in 0..<5 { try writer.write(Data("0123".utf8)) }
        }
        try editor.write(at: 1) { writer in try writer.write(Data("1234".utf8)) }
        try editor.commit()
        #expect(try JournalFixture.readFile("s.0", in: directory.url) == String(repeating: "0123", count: 5))
        #expect(!JournalFixture.fileExists("s.1", in: directory.url))
        #expect(!JournalFixture.fileExists("s.0.tmp", in: directory.url))
        #expect(try cache.strings("s") == [String(repeating: "0123", count: 5), "1234"])
    }

    @Test func theInlineLimitOfAnExistingDirectoryWins() throws {
        try openPacked(inlineLimit: 4).close()
        let cache = try openPacked(inlineLimit: 1000)
        try cache.set("k", "abcdef", "ab")
        #expect(JournalFixture.fileExists("k.0", in: directory.url))
        #expect(try JournalFixture.allLines(in: directory.url)[4] == "4")
    }

    // MARK: Damage

    @Test func aBitFlippedInARecordIsAMissTheEntryDroppedAndCounted() throws {
        let cache = try openPacked()
        try cache.set("a", "first value", "second")
        try cache.set("b", "other", "values")
        var bytes = try segmentBytes()
        bytes[16 + 14] ^= 0x04  // inside a's first value
        try Data(bytes).write(to: directory.appending("segment-00000001.pack"))
        #expect(try cache.data(forKey: "a") == nil)
        #expect(cache.statistics.corruptRecordCount == 1)
        #expect(try cache.containsValue(forKey: "a") == false)
        #expect(try cache.strings("b") == ["other", "values"])
        #expect(try JournalFixture.bodyLines(in: directory.url).last == "REMOVE a")
    }

    @Test func aDamagedSegmentHeaderCostsOnlyTheHeader() throws {
        let cache = try openPacked(segmentSize: 128)
        for index in 0..<6 { try cache.set("k\(index)", String(repeating: "v", count: 30), "\(index)") }
        try cache.close()
        let first = directory.appending("segment-00000001.pack")
        var bytes = try Data(contentsOf: first)
        bytes[3] ^= 0x10  // inside "swiftycache.seg\n"
        try bytes.write(to: first)
        let reopened = try openPacked(segmentSize: 128)
        // Every record of that segment still checks out and reads.
        for index in 0..<6 {
            #expect(try reopened.strings("k\(index)") == [String(repeating: "v", count: 30), "\(index)"])
        }
        #expect(reopened.statistics.corruptRecordCount == 0)
        // Its records compacted away, the segment is forgotten but not deleted: without its
        // header it is not provably the cache's.
        for index in 0..<6 { try reopened.set("k\(index)", "new", "\(index)") }
        try reopened.compact()
        #expect(FileManager.default.fileExists(atPath: first.path(percentEncoded: false)))
        for index in 0..<6 { #expect(try reopened.strings("k\(index)") == ["new", "\(index)"]) }
    }

    @Test func aDamagedJournalLineCostsTheEntriesItNamesNotTheCache() throws {
        let cache = try openPacked()
        for index in 0..<5 { try cache.set("k\(index)", "v\(index)", "w\(index)") }
        try cache.set("k2", "new", "value")
        cache.simulateCrash()
        // Flip a bit in the first line of k2 (its old value), and one in the magic.
        var text = try JournalFixture.readFile("journal", in: directory.url)
        text = text.replacingOccurrences(of: "CLEAN k2 2 2", with: "CLEAN k2 3 2")
        text = text.replacingOccurrences(of: "swiftycache.packed", with: "swiftycache.packee")
        try JournalFixture.writeFile("journal", text, in: directory.url)
        let reopened = try openPacked()
        // k2 is dropped, not left at either value: the damaged line might have been its last.
        #expect(try reopened.strings("k2") == nil)
        for index in [0, 1, 3, 4] { #expect(try reopened.strings("k\(index)") == ["v\(index)", "w\(index)"]) }
        #expect(reopened.recoveryReport.damagedJournalLines == 2)
        #expect(reopened.recoveryReport.droppedDamagedEntries == 1)
        #expect(!reopened.recoveryReport.wasWiped)
        // The journal was rewritten whole: magic and lines intact again.
        #expect(try JournalFixture.allLines(in: directory.url).first == "swiftycache.packed")
        #expect(try JournalFixture.bodyLines(in: directory.url).count == 4)
    }

    @Test func aDamagedKeyIsFoundByItsTag() throws {
        let cache = try openPacked()
        try cache.set("key3", "old", "w")
        for index in 0..<5 { try cache.set("key\(index)", "v\(index)", "w") }
        cache.simulateCrash()
        // The damage hits the key of key3's last line: it reads "kez3", a key that does not
        // exist. Skipping that line alone would leave key3 at its old value.
        var text = try JournalFixture.readFile("journal", in: directory.url)
        let last = try #require(text.range(of: "CLEAN key3 2 1", options: .backwards))
        text.replaceSubrange(last, with: "CLEAN kez3 2 1")
        try JournalFixture.writeFile("journal", text, in: directory.url)
        let reopened = try openPacked()
        #expect(try reopened.strings("key3") == nil)
        #expect(try reopened.strings("kez3") == nil)
        for index in [0, 1, 2, 4] { #expect(try reopened.strings("key\(index)") == ["v\(index)", "w"]) }
        #expect(reopened.recoveryReport.droppedDamagedEntries == 1)
    }

    @Test func aJournalOfAnEarlierReleaseWithoutChecksReadsAndGainsThem() throws {
        // Lines without checks, as packed journals were written before: read by the old rules.
        try FileManager.default.createDirectory(at: directory.url, withIntermediateDirectories: true)
        let first = try openPacked()
        try first.set("a", "aa", "aa")
        try first.close()
        let record = try segmentBytes()
        try FileManager.default.removeItem(at: directory.url)
        try FileManager.default.createDirectory(at: directory.url, withIntermediateDirectories: true)
        try Data(record).write(to: directory.appending("segment-00000001.pack"))
        try JournalFixture.writeFile(
            "journal", "swiftycache.packed\n1\n\(testAppVersion)\n2\n16384\n\nCLEAN a 2 2 1 16\n", in: directory.url)
        let reopened = try openPacked()
        #expect(try reopened.strings("a") == ["aa", "aa"])
        try reopened.set("b", "bb", "bb")
        try reopened.close()
        let lines = try JournalFixture.allLines(in: directory.url).dropFirst(6)
        #expect(lines.first == "CLEAN a 2 2 1 16")
        #expect(lines.dropFirst().allSatisfy { $0.contains(" ~") || $0.hasPrefix("READ ") })
        let third = try openPacked()
        #expect(try third.strings("a") == ["aa", "aa"])
        #expect(try third.strings("b") == ["bb", "bb"])
    }

    @Test func aPartialWriteOverADamagedRecordIsAnErrorNotATrap() throws {
        let cache = try openPacked()
        try cache.set("a", "first value", "second")
        var bytes = try segmentBytes()
        bytes[16 + 14] ^= 0x04  // inside a's first value, which the partial write keeps
        try Data(bytes).write(to: directory.appending("segment-00000001.pack"))
        expectError(.corruptValue) { try cache.setPartialData([1: Data("new".utf8)], forKey: "a") }
        try cache.set("b", "b", "b")
        #expect(try cache.strings("b") == ["b", "b"])
        #expect(try cache.strings("a") == nil)
    }

    @Test func aRecordTornByACrashIsAMissAndWritingGoesOnInANewSegment() throws {
        let cache = try openPacked()
        try cache.set("a", "aaaa", "aaaa")
        try cache.set("b", "bbbb", "bbbb")
        cache.simulateCrash()
        // A power cut kept the CLEAN line but not all of b's record.
        let bytes = try segmentBytes()
        try Data(bytes.dropLast(3)).write(to: directory.appending("segment-00000001.pack"))
        let reopened = try openPacked()
        #expect(try reopened.strings("a") == ["aaaa", "aaaa"])
        #expect(try reopened.strings("b") == nil)
        #expect(reopened.statistics.corruptRecordCount == 1)
        // Nothing is appended after a tail this session did not write.
        try reopened.set("c", "cccc", "cccc")
        #expect(try segmentNames() == ["segment-00000001.pack", "segment-00000002.pack"])
        #expect(try reopened.strings("c") == ["cccc", "cccc"])
    }

    @Test func aCleanCloseLetsTheNextSessionAppendToTheLastSegment() throws {
        let cache = try openPacked()
        try cache.set("a", "aaaa", "aaaa")
        try cache.close()
        let reopened = try openPacked()
        try reopened.set("b", "bbbb", "bbbb")
        #expect(try segmentNames() == ["segment-00000001.pack"])
        #expect(try reopened.strings("a") == ["aaaa", "aaaa"])
        #expect(try reopened.strings("b") == ["bbbb", "bbbb"])
    }

    @Test func aSegmentDeletedUnderneathIsAMissAndTheCacheGoesOn() throws {
        let cache = try openPacked(segmentSize: 64)
        try cache.set("a", String(repeating: "a", count: 30), "a")
        try cache.set("b", String(repeating: "b", count: 30), "b")
        try cache.close()
        try FileManager.default.removeItem(at: directory.appending("segment-00000001.pack"))
        let reopened = try openPacked(segmentSize: 64)
        #expect(try reopened.strings("a") == nil)
        #expect(try reopened.strings("b") == [String(repeating: "b", count: 30), "b"])
        // The active segment deleted while open: the next commit notices and starts another.
        try FileManager.default.removeItem(at: directory.appending("segment-00000002.pack"))
        try reopened.set("c", "cc", "cc")
        try reopened.close()
        let third = try openPacked(segmentSize: 64)
        #expect(try third.strings("c") == ["cc", "cc"])
        #expect(try third.strings("b") == nil)
    }

    @Test func aSegmentFileTheCacheDidNotWriteIsLeftAloneEvenEmptyOrAHeaderPrefix() throws {
        try FileManager.default.createDirectory(at: directory.url, withIntermediateDirectories: true)
        try JournalFixture.writeFile("segment-00000007.pack", "my notes", in: directory.url)
        // A prefix of the header, and an empty file: what a crash inside a creation could leave
        // under an earlier release, and what `touch` leaves. Neither is provably the cache's.
        try JournalFixture.writeFile("segment-00000003.pack", "swiftycache", in: directory.url)
        try JournalFixture.writeFile("segment-00000001.pack", "", in: directory.url)
        #expect(mkfifo(directory.appending("segment-00000005.pack").path(percentEncoded: false), 0o600) == 0)
        let cache = try openPacked(segmentSize: 64)
        for index in 0..<8 { try cache.set("k\(index)", String(repeating: "v", count: 40), "\(index)") }
        for index in 0..<6 { _ = try cache.removeValue(forKey: "k\(index)") }
        try cache.compact()
        #expect(try JournalFixture.readFile("segment-00000007.pack", in: directory.url) == "my notes")
        try cache.close()
        let reopened = try openPacked(segmentSize: 64)
        #expect(try reopened.strings("k7") == [String(repeating: "v", count: 40), "7"])
        try reopened.delete()
        #expect(
            try JournalFixture.fileNames(in: directory.url) == [
                "segment-00000001.pack", "segment-00000003.pack", "segment-00000005.pack", "segment-00000007.pack",
            ])
        #expect(try JournalFixture.readFile("segment-00000003.pack", in: directory.url) == "swiftycache")
        #expect(try JournalFixture.readFile("segment-00000001.pack", in: directory.url) == "")
    }

    @Test func aSegmentIsCreatedUnderTheStagingNameSoACrashTearsOnlyThat() throws {
        // What a crash between the creation and the header's write leaves: the staging file.
        try FileManager.default.createDirectory(at: directory.url, withIntermediateDirectories: true)
        let first = try openPacked()
        try first.set("a", "a", "a")
        first.simulateCrash()
        try JournalFixture.writeFile("journal.segment.tmp", "swiftyc", in: directory.url)
        let fileSystem = FaultInjectingFileSystem()
        let cache = try DiskLRUCache(
            directory: directory.url, appVersion: testAppVersion, valueCount: 2, maxSize: 1 << 20,
            options: DiskLRUCache.Options(storage: .packed), fileSystem: fileSystem)
        #expect(try JournalFixture.fileNames(in: directory.url).contains("journal.segment.tmp") == false)
        try cache.set("b", "b", "b")
        // The new segment was linked from the staging name, which is gone again.
        #expect(fileSystem.calls(to: "link") == 1)
        #expect(try JournalFixture.fileNames(in: directory.url).contains("journal.segment.tmp") == false)
        #expect(try cache.strings("a") == ["a", "a"])
        #expect(try cache.strings("b") == ["b", "b"])
    }

    // MARK: Storage choice

    @Test func aDirectoryOpenedWithTheOtherStorageThrowsAndIsUntouched() throws {
        try openCache(directory.url).set("k", "files", "mode")
        let before = try JournalFixture.fileNames(in: directory.url)
        expectError(.storageMismatch) { try openPacked() }
        #expect(try JournalFixture.fileNames(in: directory.url) == before)

        let other = TemporaryDirectory()
        let packed = try openCache(other.url, storage: .packed)
        try packed.set("k", "packed", "mode")
        try packed.close()
        let journal = try JournalFixture.readFile("journal", in: other.url)
        expectError(.storageMismatch) { try openCache(other.url) }
        expectError(.storageMismatch) {
            try DiskLRUCache(
                directory: other.url, appVersion: testAppVersion, valueCount: 2, maxSize: 100,
                options: .init(isReadOnly: true))
        }
        #expect(try JournalFixture.readFile("journal", in: other.url) == journal)
        #expect(try openCache(other.url, storage: .packed).strings("k") == ["packed", "mode"])
    }

    @Test func aFileStorageDirectoryIsConvertedKeepingItsEntries() throws {
        let files = try openCache(directory.url)
        try files.set("a", "a0", "a1")
        try files.set("b", "b0", "b1")
        _ = try files.data(forKey: "a")
        try files.close()
        let cache = try openPacked(migrates: true)
        #expect(cache.recoveryReport.migratedFromFileStorage)
        #expect(try cache.keys() == ["b", "a"])
        #expect(try cache.strings("a") == ["a0", "a1"])
        // A partial write moves the entry into a record; its files go.
        try cache.setPartialData([1: Data("B1".utf8)], forKey: "b")
        #expect(try cache.strings("b") == ["b0", "B1"])
        #expect(!JournalFixture.fileExists("b.0", in: directory.url))
        #expect(!JournalFixture.fileExists("b.1", in: directory.url))
        #expect(JournalFixture.fileExists("a.0", in: directory.url))
        try cache.removeValue(forKey: "a")
        #expect(!JournalFixture.fileExists("a.0", in: directory.url))
        try cache.close()
        let reopened = try openPacked()
        #expect(!reopened.recoveryReport.migratedFromFileStorage)
        #expect(try reopened.strings("b") == ["b0", "B1"])
    }

    // MARK: Compaction

    @Test func syncedWritesAndAReadOnlyReaderWorkInPackedStorage() throws {
        let cache = try openPacked(syncsWrites: true)
        try cache.set("a", "aa", "aaa")
        let reader = try openPacked(readOnly: true)
        #expect(try reader.strings("a") == ["aa", "aaa"])
        expectError(.readOnly) { try reader.compact() }
        try cache.set("b", "bb", "bbb")
        try reader.refresh()
        #expect(try reader.strings("b") == ["bb", "bbb"])
    }
}
