import Foundation
import SwiftyCacheCore
import SwiftyCacheTestSupport
import Testing

/// The saved index a clean close leaves in `journal.clean`: loaded instead of replaying the
/// journal, and only while the marker vouches for the journal as it is.
@Suite struct SavedIndexTests {
    let directory = TemporaryDirectory()

    func fill(_ cache: DiskLRUCache) throws {
        for i in 0..<50 { try cache.set("k\(i)", "value \(i)", String(repeating: "x", count: i)) }
        try cache.removeValue(forKey: "k7")
        _ = try cache.data(forKey: "k3")
        try cache.set("k10", "again", "y")
    }

    @Test(arguments: bothStorages) func aCleanCloseLetsTheNextOpenLoadTheIndexWithoutTheJournal(
        storage: DiskLRUCache.Storage
    ) throws {
        let cache = try openCache(directory.url, storage: storage)
        try fill(cache)
        let keys = try cache.keys()
        let size = cache.size
        try cache.close()
        #expect(try Data(contentsOf: directory.appending("journal.clean")).count > 49 * 5)
        let reopened = try openCache(directory.url, storage: storage)
        #expect(reopened.recoveryReport.loadedSavedIndex)
        #expect(!reopened.recoveryReport.sweptDirectory)
        #expect(!JournalFixture.fileExists("journal.clean", in: directory.url))
        #expect(try reopened.keys() == keys)
        #expect(reopened.size == size)
        #expect(try reopened.strings("k10") == ["again", "y"])
        #expect(try reopened.strings("k7") == nil)
        #expect(try reopened.strings("k49") == ["value 49", String(repeating: "x", count: 49)])
        // And it goes on appending to the same journal.
        try reopened.set("new", "n", "n")
        try reopened.close()
        let third = try openCache(directory.url, storage: storage)
        #expect(try third.strings("new") == ["n", "n"])
    }

    @Test func aJournalChangedSinceTheCloseIsReplayedNotTheSnapshot() throws {
        let cache = try openCache(directory.url)
        try fill(cache)
        try cache.close()
        // The Java library, say, removes an entry after our close.
        let handle = try FileHandle(forWritingTo: directory.appending("journal"))
        try handle.seekToEnd()
        try handle.write(contentsOf: Data("REMOVE k20\n".utf8))
        try handle.close()
        let reopened = try openCache(directory.url)
        #expect(!reopened.recoveryReport.loadedSavedIndex)
        #expect(try reopened.strings("k20") == nil)
        #expect(try reopened.strings("k21") == ["value 21", String(repeating: "x", count: 21)])
    }

    @Test func aDamagedSnapshotIsIgnoredAndTheJournalReplayed() throws {
        let cache = try openCache(directory.url, storage: .packed)
        try fill(cache)
        let keys = try cache.keys()
        try cache.close()
        var marker = Array(try Data(contentsOf: directory.appending("journal.clean")))
        marker[marker.count / 2] ^= 0x10
        try Data(marker).write(to: directory.appending("journal.clean"))
        let reopened = try openCache(directory.url, storage: .packed)
        #expect(!reopened.recoveryReport.loadedSavedIndex)
        // The same entries; their order is the journal's, the order of the last writes (packed
        // storage journals no reads: the read of k3 was recorded by the lost snapshot only).
        #expect(try reopened.keys().sorted() == keys.sorted())
        #expect(try reopened.strings("k3") == ["value 3", "xxx"])
    }

    @Test func afterACrashThereIsNoSnapshotToLoad() throws {
        let cache = try openCache(directory.url)
        try fill(cache)
        cache.simulateCrash()
        let reopened = try openCache(directory.url)
        #expect(!reopened.recoveryReport.loadedSavedIndex)
        #expect(try reopened.strings("k10") == ["again", "y"])
    }

    /// One slot and two are held inline by the index, three and more in an array: each loads.
    @Test(arguments: [1, 2, 3, 5]) func everySlotCountLoadsItsLengths(valueCount: Int) throws {
        let cache = try openCache(directory.url, valueCount: valueCount, storage: .packed)
        for i in 0..<20 {
            try cache.setData((0..<valueCount).map { Data(repeating: UInt8(i), count: i * 10 + $0) }, forKey: "k\(i)")
        }
        let size = cache.size
        try cache.close()
        let reopened = try openCache(directory.url, valueCount: valueCount, storage: .packed)
        #expect(reopened.recoveryReport.loadedSavedIndex)
        #expect(reopened.size == size)
        let snapshot = try #require(try reopened.snapshot(forKey: "k13"))
        #expect(snapshot.lengths == (0..<valueCount).map { 130 + $0 })
        #expect(try snapshot.readData(at: valueCount - 1) == Data(repeating: 13, count: 130 + valueCount - 1))
    }

    /// A snapshot whose checksum holds but whose lengths add up past `Int.max` (written by no
    /// close of ours) is not loaded: the journal is replayed instead.
    @Test func aSnapshotWhoseLengthsOverflowIsNotLoaded() throws {
        var (file, bytes) = try firstFormAfterClose(("a", "12345", "x"), ("b", "y", "z"))
        // Entry "a": key length 1, "a", then slot 0's length 5 as one varint byte.
        let start = try offset(of: [1, UInt8(ascii: "a"), 5], in: bytes)
        var huge: [UInt8] = []
        var value = UInt64(Int.max)
        while value >= 0x80 {
            huge.append(UInt8(truncatingIfNeeded: value) | 0x80)
            value >>= 7
        }
        huge.append(UInt8(value))
        bytes.replaceSubrange((start + 2)..<(start + 3), with: huge)
        // The checksum must hold, or the damage alone would refuse it.
        try rewriteChecksum(&bytes)
        try Data(bytes).write(to: file)
        let reopened = try openCache(directory.url, valueCount: 3)
        #expect(!reopened.recoveryReport.loadedSavedIndex)
        #expect(try reopened.strings("a") == ["12345", "x", ""])
        #expect(reopened.size == 8)
    }

    /// A snapshot whose checksum holds but that names one key twice (written by no close of
    /// ours: a forged file) is not loaded, rather than leaving two entries for one key.
    @Test func aSnapshotThatNamesAKeyTwiceIsNotLoaded() throws {
        var (file, bytes) = try firstFormAfterClose(("a", "1", "x"), ("b", "2", "y"))
        // Entry "b" (key length 1, "b", lengths 1 and 1) becomes a second "a".
        let start = try offset(of: [1, UInt8(ascii: "b"), 1, 1], in: bytes)
        bytes[start + 1] = UInt8(ascii: "a")
        try rewriteChecksum(&bytes)
        try Data(bytes).write(to: file)
        let reopened = try openCache(directory.url, valueCount: 3)
        #expect(!reopened.recoveryReport.loadedSavedIndex)
        #expect(try reopened.strings("a") == ["1", "x", ""])
        #expect(try reopened.strings("b") == ["2", "y", ""])
        #expect(reopened.size == 4)
    }

    /// Sets each key's first two values of three (a third slot keeps the saved index in its
    /// first form, which the image cannot hold), closes, and returns the marker file and its
    /// bytes.
    func firstFormAfterClose(_ entries: (String, String, String)...) throws -> (URL, [UInt8]) {
        let cache = try openCache(directory.url, valueCount: 3)
        for (key, first, second) in entries { try cache.set(key, first, second, "") }
        try cache.close()
        let file = directory.appending("journal.clean")
        let bytes = Array(try Data(contentsOf: file))
        #expect(try offset(of: Array("SCIDX001".utf8), in: bytes) > 0)
        return (file, bytes)
    }

    /// Where `pattern` first occurs in `bytes`.
    func offset(of pattern: [UInt8], in bytes: [UInt8]) throws -> Int {
        try #require((0...(bytes.count - pattern.count)).first { Array(bytes[$0..<$0 + pattern.count]) == pattern })
    }

    /// Recomputes the snapshot's checksum (XXH64 of the snapshot before it), so that a change
    /// made by a test is refused, if at all, for what it says: the snapshot starts after the
    /// marker's line.
    func rewriteChecksum(_ bytes: inout [UInt8]) throws {
        let snapshotStart = try #require(bytes.firstIndex(of: UInt8(ascii: "\n"))) + 1
        let body = Array(bytes[snapshotStart..<(bytes.count - 8)])
        let checksum = XXHash64.hash(body).littleEndian
        bytes.replaceSubrange((bytes.count - 8)..., with: withUnsafeBytes(of: checksum) { Array($0) })
    }
}
