import Foundation
import SwiftyCacheCore
import SwiftyCacheTestSupport
import Testing

let testAppVersion = 100

func openCache(
    _ directory: URL, maxSize: Int = Int.max, valueCount: Int = 2, storage: DiskLRUCache.Storage = .files
) throws -> DiskLRUCache {
    try DiskLRUCache(
        directory: directory, appVersion: testAppVersion, valueCount: valueCount, maxSize: maxSize,
        options: DiskLRUCache.Options(storage: storage))
}

extension DiskLRUCache {
    /// Sets string values, one per slot.
    func set(_ key: String, _ values: String...) throws {
        try setData(values.map { Data($0.utf8) }, forKey: key)
    }

    /// The slot values of `key` as strings, `nil` on a miss.
    func strings(_ key: String) throws -> [String]? {
        try data(forKey: key)?.map { String(decoding: $0, as: UTF8.self) }
    }
}

/// Checks the journal's body (packed journals as file storage would write them; see
/// `JournalFixture.bodyLines(in:)`) and its header.
func expectJournal(
    _ directory: URL, _ body: [String], storage: DiskLRUCache.Storage = .files,
    sourceLocation: SourceLocation = #_sourceLocation
) throws {
    let lines = try JournalFixture.allLines(in: directory)
    let header =
        storage.inlineLimit.map { [JournalFixture.packedMagic, "1", String(testAppVersion), "2", String($0), ""] }
        ?? [JournalFixture.magic, "1", String(testAppVersion), "2", ""]
    #expect(Array(lines.prefix(header.count)) == header, sourceLocation: sourceLocation)
    #expect(try JournalFixture.bodyLines(in: directory) == body, sourceLocation: sourceLocation)
}

/// The value bytes the cache holds on disk: the value files' sizes in file storage; in packed
/// storage, the lengths of every entry's values read back (each read checks its record).
func storedValueBytes(_ cache: DiskLRUCache, in directory: URL, storage: DiskLRUCache.Storage) throws -> Int {
    guard storage.inlineLimit != nil else { return try JournalFixture.valueBytes(in: directory) }
    var total = 0
    for key in try cache.keys() {
        guard let snapshot = try cache.peekSnapshot(forKey: key) else { continue }
        for slot in 0..<cache.valueCount { total += try snapshot.readData(at: slot).count }
    }
    return total
}
