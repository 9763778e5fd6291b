import Foundation
import SwiftyCacheCore
import SwiftyCacheTestSupport
import Testing

/// A power cut can leave a value file renamed into place at its recorded length with its data
/// never written: it reads as zeros (ext4 with `dioread_nolock`). The first open after a
/// session that did not close cleanly drops such entries among the files written in the five
/// minutes before the journal's last change; these tests leave the zeros by hand.
@Suite struct UnwrittenValueTests {
    let directory = TemporaryDirectory()
    var url: URL { directory.url }

    /// Overwrites the file `name` with zeros of its length.
    private func zeroFile(_ name: String, modified: Date? = nil) throws {
        let path = url.appending(path: name)
        let length = try #require(FileManager.default.attributesOfItem(atPath: path.path)[.size] as? UInt64)
        #expect(length > 0)
        try Data(count: Int(length)).write(to: path)
        if let modified {
            try FileManager.default.setAttributes([.modificationDate: modified], ofItemAtPath: path.path)
        }
    }

    private func journalModified() throws -> Date {
        try #require(
            FileManager.default.attributesOfItem(atPath: url.appending(path: "journal").path)[.modificationDate]
                as? Date)
    }

    @Test func aFileOfZerosLeftByACrashIsDroppedAndReadsAsAMiss() throws {
        let first = try openCache(url)
        try first.set("k1", "alpha", "beta")
        try first.set("k2", "gamma", "delta")
        try first.set("k3", "epsilon", "zeta")
        first.simulateCrash()
        // The power cut: k2's second file kept its name and length, not its bytes.
        try zeroFile("k2.1")
        let second = try openCache(url)
        #expect(second.recoveryReport.droppedUnwrittenValues == 1)
        #expect(second.recoveryReport.rebuiltJournal)
        #expect(try second.strings("k2") == nil)
        #expect(try second.strings("k1") == ["alpha", "beta"])
        #expect(try second.strings("k3") == ["epsilon", "zeta"])
        #expect(!JournalFixture.fileExists("k2.0", in: url))
        #expect(!JournalFixture.fileExists("k2.1", in: url))
        // The rewritten journal (the Java layout) no longer names it.
        #expect(try !JournalFixture.bodyLines(in: url).contains { $0.hasPrefix("CLEAN k2 ") })
        second.simulateCrash()
        let third = try openCache(url)
        #expect(third.recoveryReport.droppedUnwrittenValues == 0)
        #expect(try third.strings("k2") == nil)
        #expect(try third.strings("k1") == ["alpha", "beta"])
    }

    @Test func zerosWrittenBeforeTheWindowAreAValue() throws {
        let first = try openCache(url)
        try first.setData([Data(count: 10), Data("b".utf8)], forKey: "zeros")
        try first.set("other", "x", "y")
        first.simulateCrash()
        // Modified ten minutes before the journal's last change: written back long before the cut.
        try zeroFile("zeros.0", modified: journalModified().addingTimeInterval(-600))
        let second = try openCache(url)
        #expect(second.recoveryReport.droppedUnwrittenValues == 0)
        #expect(try second.data(forKey: "zeros") == [Data(count: 10), Data("b".utf8)])
    }

    @Test func aValueOfZerosWrittenJustBeforeACrashIsTheCheck_sPrice() throws {
        let first = try openCache(url)
        try first.setData([Data(count: 10), Data("b".utf8)], forKey: "zeros")
        // Read back in the session that wrote it.
        #expect(try first.data(forKey: "zeros") == [Data(count: 10), Data("b".utf8)])
        first.simulateCrash()
        // After the crash nothing tells it from a file the cut left unwritten: a miss.
        let second = try openCache(url)
        #expect(second.recoveryReport.droppedUnwrittenValues == 1)
        #expect(try second.data(forKey: "zeros") == nil)
    }

    @Test(arguments: [
        (zeroed: 4096..<8192, dropped: true),  // a whole block
        (zeroed: 8192..<10_000, dropped: true),  // the last, partial block
        (zeroed: 100..<4200, dropped: false),  // zeros across two blocks, neither whole
        (zeroed: 0..<0, dropped: false),
    ])
    func onlyABlockEntirelyOfZerosCounts(zeroed: Range<Int>, dropped: Bool) throws {
        var value = Data((0..<10_000).map { UInt8(truncatingIfNeeded: $0 % 251 + 1) })
        value.replaceSubrange(zeroed, with: Data(count: zeroed.count))
        let first = try openCache(url, valueCount: 1)
        try first.setData([value], forKey: "big")
        first.simulateCrash()
        let second = try openCache(url, valueCount: 1)
        #expect(second.recoveryReport.droppedUnwrittenValues == (dropped ? 1 : 0))
        #expect(try second.data(forKey: "big") == (dropped ? nil : [value]))
    }

    @Test func aCleanCloseVouchesForItsFiles() throws {
        let first = try openCache(url)
        try first.set("k1", "alpha", "beta")
        try first.close()
        // Zeros after a clean close are no crash's doing: not looked for (nothing is read on open).
        try zeroFile("k1.0")
        let second = try openCache(url)
        #expect(second.recoveryReport.droppedUnwrittenValues == 0)
        #expect(try second.data(forKey: "k1") == [Data(count: 5), Data("beta".utf8)])
    }

    @Test func packedStorageChecksTheValuesItKeepsInFiles() throws {
        let storage = DiskLRUCache.Storage.packed(inlineLimit: 64)
        let large = Data(repeating: 7, count: 5_000)
        let first = try openCache(url, valueCount: 1, storage: storage)
        try first.setData([large], forKey: "large")
        try first.setData([Data("small".utf8)], forKey: "small")
        first.simulateCrash()
        try zeroFile("large.0")
        let second = try openCache(url, valueCount: 1, storage: storage)
        #expect(second.recoveryReport.droppedUnwrittenValues == 1)
        #expect(try second.data(forKey: "large") == nil)
        #expect(try second.data(forKey: "small") == [Data("small".utf8)])
    }

    @Test func aRebuiltPackedJournalsEntriesAreCheckedToo() throws {
        let storage = DiskLRUCache.Storage.packed(inlineLimit: 64)
        let first = try openCache(url, valueCount: 1, storage: storage)
        try first.setData([Data(repeating: 7, count: 5_000)], forKey: "large")
        for index in 0..<100 { try first.setData([Data("small \(index)".utf8)], forKey: "small\(index)") }
        // The journal rewritten in blocks of entries, then a crash.
        try first.compact()
        #expect(try Data(contentsOf: url.appending(path: "journal")).firstRange(of: Data("BLOCK".utf8)) != nil)
        first.simulateCrash()
        try zeroFile("large.0")
        let second = try openCache(url, valueCount: 1, storage: storage)
        #expect(second.recoveryReport.droppedUnwrittenValues == 1)
        #expect(try second.data(forKey: "large") == nil)
        #expect(try second.data(forKey: "small7") == [Data("small 7".utf8)])
    }

    @Test func theWalkChecksTheLastCommitsEvenAfterManyReads() throws {
        let first = try openCache(url, valueCount: 1)
        for index in 0..<200 { try first.setData([Data("old \(index)".utf8)], forKey: "old\(index)") }
        try first.setData([Data("recent".utf8)], forKey: "recent")
        // Reads make 200 older entries more recently used than the last write.
        for index in 0..<200 { _ = try first.data(forKey: "old\(index)") }
        try first.flush()
        first.simulateCrash()
        let old = try journalModified().addingTimeInterval(-600)
        for index in 0..<200 {
            try FileManager.default.setAttributes(
                [.modificationDate: old], ofItemAtPath: url.appending(path: "old\(index).0").path)
        }
        try zeroFile("recent.0")
        let second = try openCache(url, valueCount: 1)
        #expect(second.recoveryReport.droppedUnwrittenValues == 1)
        #expect(try second.data(forKey: "recent") == nil)
        #expect(try second.data(forKey: "old7") == [Data("old 7".utf8)])
    }
}
