import Foundation
import SwiftyCacheCore
import SwiftyCacheTestSupport
import Testing

/// Packed directories crafted to make a read allocate what the files do not hold: every
/// length, offset and limit read from disk is checked before anything is allocated or read.
@Suite(.tags(.addressSanitized)) struct CraftedPackedDirectoryTests {
    let directory = TemporaryDirectory()
    static let segmentHeader = "swiftycache.seg\n"

    func write(journalLimit: String, lines: [String], segmentBytes: Int = 16) throws {
        try FileManager.default.createDirectory(at: directory.url, withIntermediateDirectories: true)
        let journal = "swiftycache.packed\n1\n1\n2\n\(journalLimit)\n\n" + lines.map { $0 + "\n" }.joined()
        try JournalFixture.writeFile("journal", journal, in: directory.url)
        try JournalFixture.writeFile("segment-00000001.pack", Self.segmentHeader, in: directory.url)
        if segmentBytes > 16 {
            let handle = try FileHandle(forWritingTo: directory.appending("segment-00000001.pack"))
            try handle.truncate(atOffset: UInt64(segmentBytes))
            try handle.close()
        }
    }

    func open(_ storage: DiskLRUCache.Storage = .packed) throws -> DiskLRUCache {
        try DiskLRUCache(
            directory: directory.url, appVersion: 1, valueCount: 2, maxSize: Int.max,
            options: DiskLRUCache.Options(storage: storage))
    }

    @Test(arguments: ["9223372036854775807", "2147483647", "1048577"])
    func anInlineLimitAboveTheCapIsRefusedWithNothingTouched(limit: String) throws {
        // Found from outside: with the limit at Int.max, reading `victim` asked for 4 EiB and trapped.
        try write(journalLimit: limit, lines: ["CLEAN victim 4611686018427387904 0 1 16"])
        let before = try JournalFixture.fileNames(in: directory.url)
        let journal = try JournalFixture.readFile("journal", in: directory.url)
        expectError(.notACacheDirectory) { try open() }
        expectError(.notACacheDirectory) { try open(.packed(inlineLimit: 100)) }
        #expect(try JournalFixture.fileNames(in: directory.url) == before)
        #expect(try JournalFixture.readFile("journal", in: directory.url) == journal)
    }

    @Test func theAPIsInlineLimitIsCappedToo() {
        #expect(
            DiskLRUCache.Storage.packed(inlineLimit: Int(Int32.max)).inlineLimit
                == DiskLRUCache.Storage.maximumInlineLimit)
        #expect(DiskLRUCache.Storage.packed(inlineLimit: -5).inlineLimit == 0)
        #expect(DiskLRUCache.Storage.packed(inlineLimit: 4096).inlineLimit == 4096)
    }

    @Test func aRecordLongerThanItsSegmentIsAMissWithoutBeingRead() throws {
        // Two slots of 1 MiB inline: a record of 2 MiB claimed in a segment of 16 bytes.
        try write(
            journalLimit: "1048576",
            lines: ["CLEAN victim 1048576 1048576 1 16", "CLEAN small 1 1 1 16", "CLEAN far 1 1 1 9223372036854775000"])
        let cache = try open()
        #expect(try cache.data(forKey: "victim") == nil)
        #expect(try cache.data(forKey: "small") == nil)
        #expect(try cache.data(forKey: "far") == nil)
        #expect(cache.statistics.corruptRecordCount >= 1)
        try cache.setData([Data("a".utf8), Data("b".utf8)], forKey: "after")
        #expect(try cache.data(forKey: "after") == [Data("a".utf8), Data("b".utf8)])
    }

    @Test func aRecordOverASparseSegmentCostsAtMostItsOwnBytes() throws {
        // A segment that claims 100 GB (sparse): the record's 2 MiB are read, fail their
        // checksum, and are a miss; nothing larger than the record is ever allocated.
        try write(journalLimit: "1048576", lines: ["CLEAN victim 1048576 1048576 1 16"], segmentBytes: 100 << 30)
        let cache = try open()
        #expect(try cache.data(forKey: "victim") == nil)
        #expect(cache.statistics.corruptRecordCount == 1)
    }

    @Test func lengthsThatOverflowARecordAreAMissNotATrap() throws {
        try write(journalLimit: "1048576", lines: ["CLEAN victim 9223372036854775807 1048576 1 16"])
        let cache = try open()
        #expect(try cache.data(forKey: "victim") == nil)
    }
}
