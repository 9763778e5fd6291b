import Foundation
import SwiftyCacheCore
import SwiftyCacheTestSupport
import Testing

/// `readValues(forKey:)`, the object cache's read: the same slots as `data(forKey:)`, looked at
/// where the read left them (a packed record's bytes, or one `Data` per slot), counted alike.
@Suite struct ReadValuesTests {
    let directory = TemporaryDirectory()

    static let storages: [DiskLRUCache.Storage] = [.packed, .packed(inlineLimit: 64), .files]

    @Test(arguments: storages)
    func readsTheSlotsDataForKeyReads(storage: DiskLRUCache.Storage) throws {
        let cache = try openCache(storage: storage, valueCount: 3)
        defer { try? cache.close() }
        // An empty slot, a small one, and one past the 64-byte inline limit (kept in a file there).
        let slots = [Data(), Data("envelope".utf8), Data((0..<300).map { UInt8(truncatingIfNeeded: $0 &* 7) })]
        try cache.setData(slots, forKey: "k")
        let values = try #require(try cache.readValues(forKey: "k"))
        #expect(values.count == 3)
        for slot in 0..<3 {
            #expect(values.length(ofSlot: slot) == slots[slot].count)
            #expect(values.withBytes(ofSlot: slot) { Data($0) } == slots[slot])
            #expect(values.data(ofSlot: slot) == slots[slot])
        }
        #expect(try cache.data(forKey: "k") == slots)
    }

    @Test(arguments: storages)
    func aMissIsNilAndReadsCountAsDataForKeyDoes(storage: DiskLRUCache.Storage) throws {
        let cache = try openCache(storage: storage, valueCount: 2)
        defer { try? cache.close() }
        #expect(try cache.readValues(forKey: "absent") == nil)
        try cache.setData([Data("a".utf8), Data("b".utf8)], forKey: "old")
        try cache.setData([Data("c".utf8), Data("d".utf8)], forKey: "new")
        // The read makes "old" the most recently used entry, as `data(forKey:)` would.
        _ = try cache.readValues(forKey: "old")
        #expect(try cache.keys() == ["new", "old"])
        #expect(cache.statistics.hitCount == 1)
        #expect(cache.statistics.missCount == 1)
    }

    /// The bytes stay valid for as long as the values are held, whatever the cache does next.
    @Test func theRecordOutlivesAnOverwriteAndACompaction() throws {
        let cache = try openCache(storage: .packed, valueCount: 2)
        defer { try? cache.close() }
        try cache.setData([Data("first".utf8), Data("value".utf8)], forKey: "k")
        let values = try #require(try cache.readValues(forKey: "k"))
        try cache.setData([Data("second".utf8), Data("other".utf8)], forKey: "k")
        try cache.compact()
        #expect(values.withBytes(ofSlot: 0) { Data($0) } == Data("first".utf8))
        #expect(values.withBytes(ofSlot: 1) { Data($0) } == Data("value".utf8))
    }

    private func openCache(storage: DiskLRUCache.Storage, valueCount: Int) throws -> DiskLRUCache {
        try DiskLRUCache(
            directory: directory.url, appVersion: 1, valueCount: valueCount, maxSize: 1 << 20,
            options: .init(storage: storage))
    }
}
