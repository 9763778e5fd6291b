import Foundation
import SwiftyCacheCore
import SwiftyCacheTestSupport
import Testing

/// `EncodedBatch` and `write(_:entries:)`: entries written straight into one buffer by the layer
/// above (the object cache's saves), committed as one batch of records that lie in it, or one
/// entry at a time where there can be no records.
@Suite(.tags(.addressSanitized)) struct EncodedBatchTests {
    let directory = TemporaryDirectory()

    func open(_ storage: DiskLRUCache.Storage = .packed, syncsWrites: Bool = false) throws -> DiskLRUCache {
        try DiskLRUCache(
            directory: directory.url, appVersion: testAppVersion, valueCount: 2, maxSize: Int.max,
            options: DiskLRUCache.Options(syncsWrites: syncsWrites, storage: storage))
    }

    func pair(_ text: String) -> [Data] { [Data("\(text)-0".utf8), Data("\(text)-1".utf8)] }

    /// Appends an entry for `key` whose slots are `values`, as the object cache does.
    func append(_ values: [Data], forKey key: String, to batch: inout DiskLRUCache.EncodedBatch) {
        batch.appendEntry { buffer in
            for value in values { buffer.append(contentsOf: value) }
            return (key, SlotLengths(values.map(\.count)))
        }
    }

    static let storages: [(DiskLRUCache.Storage, Bool)] = [
        (.files, false), (.packed, false), (.packed, true), (.packed(inlineLimit: 2), false), (.files, true),
    ]

    @Test(arguments: storages)
    func theEntriesGivenAreWrittenAndReopen(storage: DiskLRUCache.Storage, syncsWrites: Bool) throws {
        let cache = try open(storage, syncsWrites: syncsWrites)
        var batch = cache.makeEncodedBatch()
        for i in 0..<10 { append(pair("v\(i)"), forKey: "k\(i)", to: &batch) }
        #expect(batch.count == 10)
        // Entries 1 and 4 left out, as a save leaves out a value a set replaced meanwhile: the
        // records around them are written, theirs are not.
        let chosen = [0, 2, 3, 5, 6, 7, 8, 9]
        try cache.write(batch, entries: chosen)
        func check(_ cache: DiskLRUCache) throws {
            for i in 0..<10 {
                #expect(try cache.data(forKey: "k\(i)") == (chosen.contains(i) ? pair("v\(i)") : nil))
            }
            #expect(cache.count == chosen.count)
        }
        try check(cache)
        cache.simulateCrash()
        try check(try open(storage, syncsWrites: syncsWrites))
    }

    @Test func aPackedBatchIsOneJournalLineAndItsRecordsOnlyWhatWasChosen() throws {
        let cache = try open()
        var batch = cache.makeEncodedBatch()
        for i in 0..<6 { append(pair("v\(i)"), forKey: "k\(i)", to: &batch) }
        try cache.setData(pair("x"), forKey: "first")
        let before = try segmentBytes()
        try cache.write(batch, entries: [0, 1, 2, 3, 4, 5])
        let whole = try segmentBytes() - before
        try cache.write(batch, entries: [1, 3])
        // The second write appended two records' bytes, not the batch's six.
        #expect(try segmentBytes() - before - whole == 2 * whole / 6)
        let lines = try JournalFixture.allLines(in: directory.url)
        #expect(lines.last?.hasPrefix("BATCH\tCLEAN k1 ") == true)
        #expect(lines.last?.components(separatedBy: "\t").count == 3)
    }

    /// The same entries through `WriteBatch` and through `EncodedBatch` leave the same bytes: the
    /// records, and the `BATCH` line, whose member checks carry the tags taken from the records'
    /// seals.
    @Test func theSameEntriesLeaveTheSameBytesAsAWriteBatch() throws {
        let other = TemporaryDirectory()
        func open(_ directory: TemporaryDirectory) throws -> DiskLRUCache {
            try DiskLRUCache(
                directory: directory.url, appVersion: testAppVersion, valueCount: 2, maxSize: Int.max,
                options: DiskLRUCache.Options(storage: .packed))
        }
        let viaWriteBatch = try open(directory)
        let viaEncoded = try open(other)
        var writeBatch = DiskLRUCache.WriteBatch()
        var encoded = viaEncoded.makeEncodedBatch()
        for i in 0..<20 {
            let values = [Data("envelope \(i)".utf8), Data(String(repeating: "payload \(i) ", count: i).utf8)]
            writeBatch.setData(values, forKey: "key-\(i)")
            append(values, forKey: "key-\(i)", to: &encoded)
        }
        try viaWriteBatch.write(writeBatch)
        try viaEncoded.write(encoded, entries: Array(0..<20))
        try viaWriteBatch.close()
        try viaEncoded.close()
        for name in try FileManager.default.contentsOfDirectory(atPath: directory.url.path(percentEncoded: false))
        where name.hasSuffix(".pack") || name == "journal" {
            let mine = try Data(contentsOf: directory.url.appending(path: name))
            let theirs = try Data(contentsOf: other.url.appending(path: name))
            #expect(mine == theirs, "\(name)")
        }
        #expect(try JournalFixture.allLines(in: other.url).contains { $0.hasPrefix("BATCH\tCLEAN key-0 ") })
    }

    @Test func anEntryWhoseWriteThrowsLeavesNothing() throws {
        struct Failure: Error {}
        let cache = try open()
        var batch = cache.makeEncodedBatch()
        append(pair("a"), forKey: "a", to: &batch)
        #expect(throws: Failure.self) {
            try batch.appendEntry { buffer in
                buffer.append(contentsOf: [1, 2, 3])
                throw Failure()
            }
        }
        append(pair("b"), forKey: "b", to: &batch)
        #expect(batch.count == 2)
        try cache.write(batch, entries: [0, 1])
        #expect(try cache.data(forKey: "a") == pair("a"))
        #expect(try cache.data(forKey: "b") == pair("b"))
    }

    @Test(arguments: bothStorages)
    func aWrongSlotCountOrKeyWritesNothing(storage: DiskLRUCache.Storage) throws {
        let cache = try open(storage)
        var batch = cache.makeEncodedBatch()
        append(pair("a"), forKey: "a", to: &batch)
        append([Data("one".utf8)], forKey: "b", to: &batch)
        append(pair("c"), forKey: "not a key", to: &batch)
        #expect(throws: CacheError.self) { try cache.write(batch, entries: [0, 1]) }
        #expect(throws: CacheError.self) { try cache.write(batch, entries: [0, 2]) }
        #expect(try cache.data(forKey: "a") == nil)
        #expect(cache.count == 0)
    }

    /// The bytes of the packed segments in the directory.
    func segmentBytes() throws -> Int {
        let names = try FileManager.default.contentsOfDirectory(atPath: directory.url.path(percentEncoded: false))
        return try names.filter { $0.hasPrefix("segment-") && $0.hasSuffix(".pack") }.reduce(0) {
            let path = directory.url.appending(path: $1).path(percentEncoded: false)
            return $0 + ((try FileManager.default.attributesOfItem(atPath: path)[.size] as? Int) ?? 0)
        }
    }
}
