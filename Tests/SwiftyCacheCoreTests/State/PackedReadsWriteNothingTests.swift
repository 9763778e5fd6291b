import Foundation
import SwiftyCacheCore
import SwiftyCacheTestSupport
import Testing

/// In packed storage a read writes nothing: no `READ` line, no byte of any file. Recency lives
/// in memory and reaches the disk with the next journal rebuild or at a clean close (the saved
/// index keeps the order); after a crash the order is the one of the last writes.
@Suite struct PackedReadsWriteNothingTests {
    let directory = TemporaryDirectory()
    let fileSystem = FaultInjectingFileSystem()

    func open() throws -> DiskLRUCache {
        try DiskLRUCache(
            directory: directory.url, appVersion: testAppVersion, valueCount: 2, maxSize: Int.max,
            options: DiskLRUCache.Options(storage: .packed(inlineLimit: 64)), fileSystem: fileSystem)
    }

    /// Every file's size, by name.
    func sizes() throws -> [String: Int] {
        var sizes: [String: Int] = [:]
        for name in try JournalFixture.fileNames(in: directory.url) {
            sizes[name] = try Data(contentsOf: directory.url.appending(path: name)).count
        }
        return sizes
    }

    @Test func readsOfEveryKindWriteNoByte() throws {
        let cache = try open()
        for i in 0..<200 { try cache.set("k\(i)", "value \(i)", "small") }
        // Slot 1 above the inline limit: a file, read the validating way.
        try cache.set("large", "v", String(repeating: "x", count: 100))
        try cache.flush()
        let before = try sizes()
        let writes = fileSystem.calls(to: "write")
        var generator = SplitMix(state: 7)
        for _ in 0..<5_000 {
            let i = Int.random(in: 0..<220, using: &generator)
            let values = try cache.strings("k\(i)")
            #expect(values == (i < 200 ? ["value \(i)", "small"] : nil))
        }
        for _ in 0..<100 {
            #expect(try cache.strings("large")?.first == "v")
            _ = try cache.snapshot(forKey: "k1")?.close()
            _ = try cache.dataIfInMemory(forKey: "k2")
        }
        cache.waitForBackgroundWork()
        try cache.flush()
        #expect(fileSystem.calls(to: "write") == writes)
        #expect(try sizes() == before)
        #expect(cache.statistics.hitCount > 4_000)
    }

    @Test(arguments: [false, true])
    func theOrderOfReadsSurvivesACleanClose(compactedFirst: Bool) throws {
        let cache = try open()
        for i in 0..<10 { try cache.set("k\(i)", "v", "w") }
        // A compacted journal replays as fast as a saved index loads: the close writes one
        // all the same when reads moved entries since.
        if compactedFirst { try cache.compact() }
        #expect(try cache.strings("k0") == ["v", "w"])
        #expect(try cache.strings("k4") == ["v", "w"])
        let order = try cache.keys()
        #expect(order.suffix(2) == ["k0", "k4"])
        try cache.close()
        let reopened = try open()
        #expect(reopened.recoveryReport.loadedSavedIndex)
        #expect(try reopened.keys() == order)
    }

    @Test func aJournalRebuildRecordsTheOrderOfReads() throws {
        let cache = try open()
        for i in 0..<10 { try cache.set("k\(i)", "v", "w") }
        #expect(try cache.strings("k0") == ["v", "w"])
        try cache.compact()
        let order = try cache.keys()
        #expect(order.last == "k0")
        cache.simulateCrash()
        #expect(try open().keys() == order)
    }

    @Test func afterACrashTheOrderIsTheOneOfTheLastWrites() throws {
        let cache = try open()
        for i in 0..<10 { try cache.set("k\(i)", "v", "w") }
        #expect(try cache.strings("k0") == ["v", "w"])
        cache.simulateCrash()
        let reopened = try open()
        #expect(try reopened.keys() == (0..<10).map { "k\($0)" })
    }
}
