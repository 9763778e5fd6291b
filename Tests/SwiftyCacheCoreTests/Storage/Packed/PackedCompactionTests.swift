import Foundation
import SwiftyCacheCore
import SwiftyCacheTestSupport
import Testing

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Packed compaction: it keeps every live value and the LRU order, frees the garbage, bounds
/// the disk under churn in the background, and runs beside snapshots, readers and writers.
@Suite(.tags(.addressSanitized, .concurrency)) struct PackedCompactionTests: PackedDirectoryTests {
    let directory = TemporaryDirectory()

    @Test func compactionKeepsEveryLiveValueAndTheLRUOrderAndFreesTheGarbage() throws {
        // No background compaction: the explicit one does all the work.
        let cache = try openPacked(segmentSize: 1024, compactsInBackground: false)
        for round in 0..<6 {
            for i in 0..<40 { try cache.set("k\(i)", "round \(round) value \(i)", String(repeating: "x", count: i)) }
        }
        for i in stride(from: 0, to: 40, by: 3) { try cache.removeValue(forKey: "k\(i)") }
        _ = try cache.data(forKey: "k1")
        let order = try cache.keys()
        try cache.compact()
        // Left: the segment headers and the live records (12 bytes and the values each).
        let live = (0..<40).filter { $0 % 3 != 0 }.reduce(0) { total, i in
            total + 12 + "round 5 value \(i)".utf8.count + i
        }
        let segments = try segmentNames().count
        #expect(cache.statistics.compactedSegmentCount > 0)
        #expect(try segmentFileBytes() == live + 16 * segments)
        #expect(segments <= live / 1024 + 2)
        #expect(try cache.keys() == order)
        for i in 0..<40 where i % 3 != 0 {
            #expect(try cache.strings("k\(i)") == ["round 5 value \(i)", String(repeating: "x", count: i)])
        }
        try cache.close()
        // The reads above were uses, oldest key first; compaction's MOVE lines are not.
        let reopened = try openPacked(segmentSize: 1024)
        #expect(try reopened.keys() == (0..<40).filter { $0 % 3 != 0 }.map { "k\($0)" })
        #expect(try reopened.strings("k2") == ["round 5 value 2", "xx"])
        #expect(
            try JournalFixture.rawBodyLines(in: directory.url).contains {
                $0.hasPrefix("MOVE ") || $0.hasPrefix("CLEAN ")
            })
    }

    @Test func backgroundCompactionBoundsTheDiskUnderChurn() throws {
        let cache = try openPacked(maxSize: 8 << 10, segmentSize: 4 << 10)
        for i in 0..<3000 { try cache.set("k\(i % 300)", String(repeating: "v", count: 40 + i % 30), "\(i)") }
        cache.waitForBackgroundWork()
        cache.waitForBackgroundWork()
        let onDisk = try segmentFileBytes()
        print("packed churn: \(onDisk) segment bytes for \(cache.size) live value bytes (max \(8 << 10))")
        #expect(cache.statistics.compactedSegmentCount > 0)
        #expect(Double(onDisk) <= 1.5 * Double(8 << 10) * 1.3 + Double(4 << 10) * 2)
    }

    @Test func aSnapshotReadsItsValuesAcrossCompactionAndAnEditorCommitsThroughIt() throws {
        let cache = try openPacked(segmentSize: 256)
        for i in 0..<20 { try cache.set("k\(i)", "old \(i)", "x") }
        let snapshot = try #require(try cache.snapshot(forKey: "k3"))
        let editor = try #require(try cache.edit(forKey: "k4"))
        try editor.setString("new 4", at: 0)
        for i in 0..<20 where i != 4 { try cache.set("k\(i)", "new \(i)", "y") }
        try cache.compact()
        #expect(try snapshot.readString(at: 0) == "old 3")
        #expect(try snapshot.readString(at: 1) == "x")
        try editor.commit()
        #expect(try cache.strings("k4") == ["new 4", "x"])
        #expect(try cache.strings("k3") == ["new 3", "y"])
        #expect(try snapshot.edit() == nil)  // the entry changed since
    }

    @Test func compactionRunsBesideReadersAndWriters() async throws {
        let cache = try openPacked(segmentSize: 2048)
        for i in 0..<50 { try await cache.setData(CheckedValue.pair(key: "k\(i)", sequence: 0), forKey: "k\(i)") }
        try await withThrowingTaskGroup(of: Void.self) { group in
            for worker in 0..<3 {
                group.addTask {
                    for round in 1...150 {
                        let key = "k\((round * 7 + worker * 13) % 50)"
                        if worker == 0 {
                            try await cache.setData(CheckedValue.pair(key: key, sequence: round), forKey: key)
                        } else if let values = try await cache.data(forKey: key) {
                            #expect(CheckedValue.isConsistentPair(values, key: key))
                        }
                    }
                }
            }
            group.addTask {
                for _ in 0..<20 { try cache.compact() }
            }
            try await group.waitForAll()
        }
        for i in 0..<50 {
            let values = try #require(try await cache.data(forKey: "k\(i)"))
            #expect(CheckedValue.isConsistentPair(values, key: "k\(i)"))
        }
    }

    // MARK: Other modes
}
