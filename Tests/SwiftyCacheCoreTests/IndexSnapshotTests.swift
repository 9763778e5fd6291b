import Foundation
import SwiftyCacheCore
import SwiftyCacheTestSupport
import Testing

/// The index snapshot a clean close leaves in `journal.clean`: loaded instead of replaying the
/// journal, and only while the marker vouches for the journal as it is.
@Suite struct IndexSnapshotTests {
    let directory = TemporaryDirectory()

    func fill(_ cache: DiskLRUCache) throws {
        for i in 0..<50 { try cache.set("k\(i)", "value \(i)", String(repeating: "x", count: i)) }
        try cache.remove("k7")
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
        #expect(reopened.recoveryReport.loadedIndexSnapshot)
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
        #expect(!reopened.recoveryReport.loadedIndexSnapshot)
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
        #expect(!reopened.recoveryReport.loadedIndexSnapshot)
        #expect(try reopened.keys() == keys)
        #expect(try reopened.strings("k3") == ["value 3", "xxx"])
    }

    @Test func afterACrashThereIsNoSnapshotToLoad() throws {
        let cache = try openCache(directory.url)
        try fill(cache)
        cache.simulateCrash()
        let reopened = try openCache(directory.url)
        #expect(!reopened.recoveryReport.loadedIndexSnapshot)
        #expect(try reopened.strings("k10") == ["again", "y"])
    }
}
