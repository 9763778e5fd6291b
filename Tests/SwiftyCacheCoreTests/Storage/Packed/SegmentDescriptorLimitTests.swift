import Foundation
import SwiftyCacheTestSupport
import Testing

@testable import SwiftyCacheCore

/// Packed storage keeps a bounded number of segment descriptors open: the least recently used
/// segment is closed past the limit and opened again when read, never the active one, so a cache
/// of many segments runs under a small descriptor limit (iOS starts apps at 256).
@Suite struct SegmentDescriptorLimitTests {
    let directory = TemporaryDirectory()

    func open(maxOpenSegments: Int) throws -> DiskLRUCache {
        var options = DiskLRUCache.Options(storage: .packed)
        options.packedSegmentSize = 256
        options.maxOpenSegments = maxOpenSegments
        return try DiskLRUCache(
            directory: directory.url, appVersion: 1, valueCount: 2, maxSize: Int.max, options: options)
    }

    func openSegments(of cache: DiskLRUCache) throws -> (count: Int, activeIsOpen: Bool) {
        let packed = try #require(cache.storage as? PackedStorage)
        return packed.state.withLock { segments in
            (segments.open.count, segments.active.map { segments.open[$0.number] != nil } ?? true)
        }
    }

    func value(_ key: String) -> [Data] { [Data(key.utf8), Data(repeating: UInt8(key.count), count: 120)] }

    @Test func manySegmentsReadBackWithAtMostTheLimitOpen() throws {
        let cache = try open(maxOpenSegments: 4)
        let keys = (0..<120).map { "key-\($0)" }
        for key in keys { try cache.setData(value(key), forKey: key) }
        let segments = try FileManager.default.contentsOfDirectory(atPath: directory.path)
            .filter { $0.hasPrefix("segment-") }
        #expect(segments.count > 50)
        for _ in 0..<2 {
            for key in keys.shuffled() { #expect(try cache.data(forKey: key) == value(key)) }
            let open = try openSegments(of: cache)
            #expect(open.count <= 4)
            #expect(open.activeIsOpen)
        }
        // Compaction reads and retires segments closed meanwhile; a crash and a reopen find all.
        for key in keys.prefix(60) { try cache.removeValue(forKey: key) }
        try cache.compact()
        cache.simulateCrash()
        let reopened = try open(maxOpenSegments: 4)
        defer { try? reopened.close() }
        #expect(try openSegments(of: reopened).count <= 4)
        #expect(try reopened.keys().sorted() == keys.suffix(60).sorted())
        for key in keys.suffix(60) { #expect(try reopened.data(forKey: key) == value(key)) }
    }

    @Test func theLeastRecentlyUsedSegmentIsClosedAndNeverTheActiveOne() throws {
        var segments = PackedStorage.Segments(openLimit: 2)
        let fileSystem = SystemFileSystem()
        func segment(_ number: UInt32) throws -> SegmentFile {
            let fd = try fileSystem.open(directory.path, flags: OpenFlags.readOnly, mode: 0)
            return SegmentFile(number: number, fd: fd, fileSystem: fileSystem)
        }
        let active = try segment(1)
        segments.active = active
        segments.insertOpen(active)
        segments.insertOpen(try segment(2))
        segments.insertOpen(try segment(3))  // past the limit: 2 goes, the active one stays
        #expect(Set(segments.open.keys) == [1, 3])
        #expect(segments.lookUp(2) == nil)
        segments.insertOpen(try segment(4))  // 3 is the eldest but the active: 3 goes
        #expect(Set(segments.open.keys) == [1, 4])
        _ = segments.lookUp(4)
        segments.insertOpen(try segment(5))
        #expect(Set(segments.open.keys) == [1, 5])
    }

    @Test(arguments: [(256, 16), (1024, 64), (1_048_576, 256), (64, 8)])
    func theDefaultLimitIsASixteenthOfTheProcesssDescriptors(descriptors: Int, segments: Int) {
        #expect(PackedStorage.defaultOpenSegmentLimit(descriptorLimit: descriptors) == segments)
    }
}
