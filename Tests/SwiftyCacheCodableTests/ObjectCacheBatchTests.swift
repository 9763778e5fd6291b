import Foundation
import SwiftyCacheCodable
import SwiftyCacheCore
import SwiftyCacheTestSupport
import Testing

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// `set(contentsOf:)` and `save()` write their values as engine batches: one unit in packed
/// storage, with the syncs of one write under `syncsWrites`.
@Suite struct ObjectCacheBatchTests {
    let directory = TemporaryDirectory()
    let fileSystem = FaultInjectingFileSystem()

    func open(syncsWrites: Bool = false, storage: DiskLRUCache.Storage = .packed) throws -> ObjectCache<String, Note> {
        var configuration = ObjectCacheConfiguration()
        configuration.storage = storage
        configuration.syncsWrites = syncsWrites
        return try ObjectCache(directory: directory.url, configuration: configuration, fileSystem: fileSystem)
    }

    func note(_ i: Int) -> Note {
        Note(
            title: "note \(i)", tags: ["t\(i % 7)"], created: Date(timeIntervalSince1970: Double(i)), body: "body \(i)")
    }

    func batchLines() throws -> Int {
        try JournalFixture.allLines(in: directory.url).filter { $0.hasPrefix("BATCH") }.count
    }

    @Test(arguments: bothStorages)
    func setContentsOfStoresEveryValueAndReopens(storage: DiskLRUCache.Storage) throws {
        let cache = try open(storage: storage)
        let values = Dictionary(uniqueKeysWithValues: (0..<50).map { ("n\($0)", note($0)) })
        try cache.set(contentsOf: values)
        // Packed storage: one journal line for the 50 values; file storage: a line per value.
        #expect(try batchLines() == (storage == .files ? 0 : 1))
        for i in 0..<50 { #expect(try cache.value(forKey: "n\(i)") == note(i)) }
        try cache.close()
        let reopened = try open(storage: storage)
        #expect(reopened.count == 50)
        for i in 0..<50 { #expect(try reopened.value(forKey: "n\(i)") == note(i)) }
    }

    @Test func aLaterValueOfAKeyWins() throws {
        let cache = try open()
        try cache.set(contentsOf: [(key: "k", value: note(1)), (key: "k", value: note(2))])
        #expect(try cache.value(forKey: "k") == note(2))
        cache.clearMemory()
        #expect(try cache.value(forKey: "k") == note(2))
    }

    @Test func saveWritesTheUnsavedValuesAsOneDurableBatch() throws {
        let cache = try open(syncsWrites: true)
        try cache.set(note(0), forKey: "first")
        try cache.set(contentsOf: [(key: "warm", value: note(0))])
        for i in 0..<500 { cache.setUnsaved(note(i), forKey: "n\(i)") }
        let before = fileSystem.calls(to: "fsync")
        try cache.save()
        // The segment the batch is logged in: as one `set`.
        #expect(fileSystem.calls(to: "fsync") - before == 1)
        #expect(try batchLines() == 2)
        for i in 0..<500 { #expect(!cache.hasUnsavedValue(forKey: "n\(i)")) }
        try cache.close()
        let reopened = try open()
        #expect(reopened.count == 502)
        #expect(try reopened.value(forKey: "n499") == note(499))
    }

    @Test func aFailedSaveKeepsEveryValueUnsaved() throws {
        let cache = try open()
        try cache.set(contentsOf: [(key: "warm", value: note(0))])
        for i in 0..<20 { cache.setUnsaved(note(i), forKey: "n\(i)") }
        fileSystem.failCalls(named: ["write"], errno: EIO)
        #expect(throws: ObjectCacheError.self) { try cache.save() }
        for i in 0..<20 { #expect(cache.hasUnsavedValue(forKey: "n\(i)")) }
        fileSystem.heal()
        try cache.save()
        for i in 0..<20 { #expect(!cache.hasUnsavedValue(forKey: "n\(i)")) }
        try cache.close()
        #expect(try open().count == 21)
    }

    @Test func anUnencodableValueFailsBeforeAnythingIsWritten() throws {
        let cache = try open()
        let bad = Note(title: "bad", tags: [], created: Date(timeIntervalSince1970: .nan), body: "")
        #expect(throws: ObjectCacheError.self) {
            try cache.set(contentsOf: [(key: "good", value: note(1)), (key: "bad", value: bad)])
        }
        #expect(try cache.value(forKey: "good") == nil)
    }

    @Test func aValueThatFailsToEncodeInASaveLeavesItsNeighboursWhole() throws {
        // The batch encodes its values into one buffer: the bytes the bad value wrote before it
        // failed (its envelope, then part of its payload) must not end up in the value after it.
        let cache = try open()
        let bad = Note(title: "bad", tags: ["x"], created: Date(timeIntervalSince1970: .nan), body: "")
        for i in 0..<5 { cache.setUnsaved(i == 2 ? bad : note(i), forKey: "n\(i)") }
        #expect(throws: ObjectCacheError.self) { try cache.save() }
        #expect(cache.hasUnsavedValue(forKey: "n2"))
        try? cache.close()
        let reopened = try open()
        for i in [0, 1, 3, 4] { #expect(try reopened.value(forKey: "n\(i)") == note(i)) }
        #expect(try reopened.value(forKey: "n2") == nil)
    }

    @Test func aSaveOfMoreThanOneBufferOfValuesWritesEveryOneWhole() throws {
        // Over 1 MiB of values: the batch's encoding starts a new buffer (and `Data`) past it.
        let cache = try open()
        func big(_ i: Int) -> Note {
            Note(
                title: "big \(i)", tags: [], created: Date(timeIntervalSince1970: Double(i)),
                body: String(repeating: "\(i % 10)", count: 900 + i % 200))
        }
        for i in 0..<3_000 { cache.setUnsaved(big(i), forKey: "b\(i)") }
        try cache.save()
        try cache.close()
        let reopened = try open()
        for i in 0..<3_000 { #expect(try reopened.value(forKey: "b\(i)") == big(i)) }
    }

    @Test func concurrentBatchesAndSingleWritesNeverDeadlock() async throws {
        let cache = try open()
        await withTaskGroup(of: Void.self) { group in
            for worker in 0..<4 {
                group.addTask {
                    for round in 0..<50 {
                        let keys = (0..<8).map { "k\(($0 * 7 + worker + round) % 40)" }
                        try? cache.set(contentsOf: keys.map { (key: $0, value: note(round)) })
                        try? cache.set(note(worker), forKey: keys[0])
                    }
                }
            }
        }
        #expect(cache.count <= 40)
        #expect(cache.count > 0)
    }
}
