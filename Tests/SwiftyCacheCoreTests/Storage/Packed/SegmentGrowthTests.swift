import Foundation
import SwiftyCacheTestSupport
import Testing

@testable import SwiftyCacheCore

/// Packed segments grow with the cache, a sixteenth of the live bytes up to 256 MiB, so that a
/// large cache is a few dozen segments its bounded descriptors keep open; a segment size set
/// for a test stays fixed. A small cache's segments start at a sixteenth of its `maxSize`
/// (512 KiB at least), so that its garbage is reclaimed in pieces near its size.
@Suite struct SegmentGrowthTests {
    let directory = TemporaryDirectory()

    @Test func theRollSizeIsASixteenthOfTheLiveBytesBetweenTheBaseAndTheCeiling() {
        let cacheDirectory = CacheDirectory(fileSystem: SystemFileSystem(), path: directory.path)
        let growing = PackedStorage(
            directory: cacheDirectory, valueCount: 1, inlineLimit: 1024, syncsWrites: false, isReadOnly: false,
            growsSegments: true)
        #expect(growing.rollSize(liveBytes: 0) == 4 << 20)
        #expect(growing.rollSize(liveBytes: 64 << 20) == 4 << 20)
        #expect(growing.rollSize(liveBytes: 1 << 30) == 64 << 20)
        #expect(growing.rollSize(liveBytes: 40 << 30) == 256 << 20)
        let fixed = PackedStorage(
            directory: cacheDirectory, valueCount: 1, inlineLimit: 1024, syncsWrites: false, isReadOnly: false)
        #expect(fixed.rollSize(liveBytes: 40 << 30) == 4 << 20)
        var options = DiskLRUCache.Options(storage: .packed)
        #expect(options.growsPackedSegments)
        options.packedSegmentSize = 256
        #expect(!options.growsPackedSegments)
    }

    @Test func aSmallCachesSegmentsStartAtASixteenthOfItsLimit() {
        let cacheDirectory = CacheDirectory(fileSystem: SystemFileSystem(), path: directory.path)
        for (maxSize, smallest) in [(1 << 20, 256 << 10), (16 << 20, 1 << 20), (1 << 30, 4 << 20)] {
            let storage = PackedStorage(
                directory: cacheDirectory, valueCount: 1, inlineLimit: 1024, syncsWrites: false, isReadOnly: false,
                growsSegments: true, maxSize: maxSize)
            #expect(storage.rollSize(liveBytes: 0) == Int64(smallest))
            #expect(storage.rollSize(liveBytes: 1 << 30) == 64 << 20)
        }
    }

    /// A cache of 1 MiB written ten times over: its segments stay within about twice its limit
    /// (4 MiB segments, as before, left one of them mostly garbage: four times the limit).
    @Test func aSmallCacheUnderChurnKeepsItsSegmentsNearItsLimit() throws {
        let directory = TemporaryDirectory()
        let cache = try DiskLRUCache(
            directory: directory.url, appVersion: 1, valueCount: 1, maxSize: 1 << 20,
            options: DiskLRUCache.Options(storage: .packed))
        var largest = 0
        for i in 0..<10_000 {
            try cache.setData([Data(repeating: UInt8(i % 251), count: 1_000)], forKey: "k\(i)")
            if i % 500 == 499 {
                cache.waitForBackgroundWork()
                let names = try FileManager.default.contentsOfDirectory(atPath: directory.path)
                let segments = try names.filter { $0.hasPrefix("segment-") }.reduce(0) { total, name in
                    let attributes = try FileManager.default.attributesOfItem(atPath: directory.path + "/" + name)
                    return total + ((attributes[.size] as? Int) ?? 0)
                }
                largest = max(largest, segments)
            }
        }
        #expect(cache.size <= 1 << 20)
        #expect(largest < 5 << 19, "segments took \(largest) bytes")
        #expect(try cache.data(forKey: "k9999") == [Data(repeating: UInt8(9_999 % 251), count: 1_000)])
    }

    @Test func aGrowingCacheWritesFewerLargerSegmentsAndReadsEveryEntryBack() throws {
        func fill(growing: Bool) throws -> Int {
            let directory = TemporaryDirectory()
            var options = DiskLRUCache.Options(storage: .packed)
            options.packedSegmentSize = 256
            options.growsPackedSegments = growing
            let cache = try DiskLRUCache(
                directory: directory.url, appVersion: 1, valueCount: 1, maxSize: Int.max, options: options)
            let keys = (0..<1_500).map { "key-\($0)" }
            for key in keys { try cache.setData([Data(repeating: UInt8(key.count), count: 100)], forKey: key) }
            try cache.close()
            let reopened = try DiskLRUCache(
                directory: directory.url, appVersion: 1, valueCount: 1, maxSize: Int.max, options: options)
            for key in keys.shuffled() {
                #expect(try reopened.data(forKey: key) == [Data(repeating: UInt8(key.count), count: 100)])
            }
            #expect(reopened.withState { $0.invariantViolation() } == nil)
            return try FileManager.default.contentsOfDirectory(atPath: directory.path)
                .filter { $0.hasPrefix("segment-") }.count
        }
        let fixed = try fill(growing: false)
        let grown = try fill(growing: true)
        #expect(fixed > 400)  // 160 KiB of records in 256-byte segments
        #expect(grown < 120)  // each segment a sixteenth of what was live when it began: about 80
    }

    /// An open learns which segments hold live records: those left without any are deleted,
    /// the others serve every entry. With a stray segment numbered far past the others (the
    /// sum then falls back from an array indexed by number to a dictionary), the same.
    @Test(arguments: [false, true])
    func segmentsLeftWithoutLiveRecordsGoAtOpenAndTheRestServeTheirEntries(strayFarSegment: Bool) throws {
        var options = DiskLRUCache.Options(storage: .packed)
        options.packedSegmentSize = 4096
        // No compaction: the segments stay as the writes and removals left them.
        options.compactsInBackground = false
        let value = Data(repeating: 7, count: 1000)
        var cache = try DiskLRUCache(
            directory: directory.url, appVersion: 1, valueCount: 1, maxSize: Int.max, options: options)
        for index in 0..<30 { try cache.setData([value + Data("\(index)".utf8)], forKey: "k\(index)") }
        for index in 0..<12 { try cache.removeValue(forKey: "k\(index)") }
        try cache.close()
        func segments() throws -> [String] {
            try FileManager.default.contentsOfDirectory(atPath: directory.path).filter { $0.hasPrefix("segment-") }
                .sorted()
        }
        let before = try segments()
        #expect(before.count >= 8 && before[0] == "segment-00000001.pack", "\(before)")
        let stray = "segment-4000000000.pack"
        if strayFarSegment, let last = before.last {
            try FileManager.default.copyItem(
                at: directory.url.appending(path: last), to: directory.url.appending(path: stray))
        }
        cache = try DiskLRUCache(
            directory: directory.url, appVersion: 1, valueCount: 1, maxSize: Int.max, options: options)
        let after = try segments()
        // The first three segments held only removed entries (three of 1 KiB each fit one).
        #expect(!after.contains(before[0]) && !after.contains(before[1]) && !after.contains(before[2]))
        #expect(after.contains(before[before.count - 1]))
        #expect(!after.contains(stray))
        for index in 12..<30 {
            #expect(try cache.data(forKey: "k\(index)") == [value + Data("\(index)".utf8)])
        }
        try cache.close()
    }
}
