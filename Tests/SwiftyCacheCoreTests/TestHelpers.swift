import Foundation
import SwiftyCacheCore
import SwiftyCacheTestSupport
import Testing

let testAppVersion = 100

func openCache(_ directory: URL, maxSize: Int = Int.max, valueCount: Int = 2) throws -> DiskLRUCache {
    try DiskLRUCache(directory: directory, appVersion: testAppVersion, valueCount: valueCount, maxSize: maxSize)
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

func expectJournal(_ directory: URL, _ body: [String], sourceLocation: SourceLocation = #_sourceLocation) throws {
    let lines = try JournalFixture.allLines(in: directory)
    #expect(
        lines == [JournalFixture.magic, "1", String(testAppVersion), "2", ""] + body,
        sourceLocation: sourceLocation)
}
