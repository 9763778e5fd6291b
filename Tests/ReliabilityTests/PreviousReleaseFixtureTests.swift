import Foundation
import SwiftyCacheCodable
import SwiftyCacheCore
import SwiftyCacheTestSupport
import Testing

/// Caches the previous release wrote reopen value for value: the directories in
/// `Tests/Fixtures/release-b6dd705` were written by the release at commit b6dd705 with
/// `Tests/Fixtures/release-b6dd705.generator.swift.txt`, whose contents this suite computes again.
/// Each is copied to a temporary directory first (opening writes).
@Suite struct PreviousReleaseFixtureTests {
    static let fixtures = URL(filePath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .appending(path: "Fixtures/release-b6dd705", directoryHint: .isDirectory)

    static func engineValue(_ index: Int, slot: Int, round: Int) -> Data {
        let length = index % 7 == 3 && slot == 1 ? 20_000 + index : 10 + (index * 37 + slot * 11) % 300
        var bytes = [UInt8]()
        bytes.reserveCapacity(length)
        var state = UInt64(index * 1_000 + slot * 100 + round)
        for _ in 0..<length {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            bytes.append(UInt8(truncatingIfNeeded: state >> 33))
        }
        return Data(bytes)
    }

    struct Note: Codable, Equatable {
        var id: Int
        var title: String
        var body: String
        var tags: [String]
        var created: Date
        var pinned: Bool
        var rating: Double?
    }

    static func note(_ index: Int) -> Note {
        Note(
            id: index, title: "Note \(index) — ünïcödé \"quoted\"",
            body: String(repeating: "body \(index) ", count: 1 + index % 9),
            tags: (0..<(index % 4)).map { "tag\($0)" },
            created: Date(timeIntervalSince1970: 1_700_000_000 + Double(index) * 3600.5),
            pinned: index % 2 == 0, rating: index % 3 == 0 ? nil : Double(index) / 4)
    }

    /// A copy of fixture `name` to open.
    static func copy(_ name: String) throws -> (TemporaryDirectory, URL) {
        let directory = TemporaryDirectory(name)
        try FileManager.default.createDirectory(at: directory.url, withIntermediateDirectories: true)
        let url = directory.appending(name)
        try FileManager.default.copyItem(at: fixtures.appending(path: name), to: url)
        return (directory, url)
    }

    @Test(arguments: [
        ("engine-files", DiskLRUCache.Storage.files), ("engine-files-unclosed", .files),
        ("engine-packed", .packed), ("engine-packed-unclosed", .packed),
    ])
    func anEngineDirectoryReopensValueForValue(name: String, storage: DiskLRUCache.Storage) throws {
        let (directory, url) = try Self.copy(name)
        _ = directory
        for _ in 0..<2 {
            // Twice: as the release left it, then as this release closed it.
            let cache = try DiskLRUCache(
                directory: url, appVersion: 3, valueCount: 2, maxSize: 1 << 30, options: .init(storage: storage))
            #expect(cache.recoveryReport.wipeReason == nil)
            #expect(cache.recoveryReport.unknownFiles.isEmpty)
            for index in 0..<40 {
                let values = try cache.data(forKey: "key-\(index)")
                if index % 5 == 1 {
                    #expect(values == nil, "key-\(index) was removed")
                } else {
                    let round = index % 3 == 0 ? 1 : 0
                    #expect(values == [0, 1].map { Self.engineValue(index, slot: $0, round: round) }, "key-\(index)")
                }
            }
            #expect(cache.count == 32)
            try cache.close()
        }
    }

    @Test(arguments: [
        ("object-json-packed", ObjectCacheFormat.json, DiskLRUCache.Storage.packed),
        ("object-plist-packed", .propertyList(), .packed),
        ("object-xmlplist-packed", .propertyList(.xml), .packed),
        ("object-json-files", .json, .files),
    ])
    func anObjectCacheReopensValueForValue(name: String, format: ObjectCacheFormat, storage: DiskLRUCache.Storage)
        throws
    {
        let (directory, url) = try Self.copy(name)
        _ = directory
        let cache = try ObjectCache<String, Note>(
            directory: url, format: format, diskOptions: DiskLRUCache.Options(storage: storage))
        for index in 0..<25 {
            var expected = Self.note(index)
            // XML property lists keep dates to the second (a property of the format in every release).
            if name.contains("xml") {
                expected.created = Date(timeIntervalSince1970: expected.created.timeIntervalSince1970.rounded(.down))
            }
            #expect(try cache.value(forKey: "note-\(index)") == expected, "note-\(index)")
        }
        try cache.close()
    }
}
