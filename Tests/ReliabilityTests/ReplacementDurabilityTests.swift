import Foundation
import SwiftyCacheCore
import SwiftyCacheTestSupport
import Testing

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// What replaces or deletes bytes that may be on stable storage makes the replacement durable
/// first, with or without `syncsWrites`: a journal rebuild, a compacted segment's deletion, a
/// dead segment's deletion at open. Shown by failing `fsync`: while it fails, nothing durable is
/// replaced or deleted (before this rule, all three went ahead and a power cut could empty the
/// cache).
@Suite(.tags(.addressSanitized)) struct ReplacementDurabilityTests {
    let directory = TemporaryDirectory()

    func open(
        _ storage: DiskLRUCache.Storage, fileSystem: FaultInjectingFileSystem, segmentSize: Int64 = 4 << 20
    ) throws -> DiskLRUCache {
        var options = DiskLRUCache.Options(storage: storage)
        options.compactsInBackground = false
        options.packedSegmentSize = segmentSize
        return try DiskLRUCache(
            directory: directory.url, appVersion: 1, valueCount: 2, maxSize: 1 << 30, options: options,
            fileSystem: fileSystem)
    }

    func journalSize() throws -> Int {
        try Data(contentsOf: directory.appending("journal")).count
    }

    @Test(arguments: bothStorages)
    func aRebuiltJournalIsNeverSwappedInBeforeItIsDurable(storage: DiskLRUCache.Storage) throws {
        let fileSystem = FaultInjectingFileSystem()
        let cache = try open(storage, fileSystem: fileSystem)
        fileSystem.failCalls(named: ["fsync"], errno: EIO)
        for index in 0...Journal.rebuildThreshold {
            try cache.setData(CheckedValue.pair(key: "k", sequence: index), forKey: "k")
        }
        // A rebuild is due: every attempt (here, and any in the background) fails at its fsync.
        expectError(.ioFailure) { try cache.flush() }
        let lines = try JournalFixture.rawBodyLines(in: directory.url)
        #expect(lines.count > Journal.rebuildThreshold, "a rebuild was swapped in without its fsync")
        fileSystem.heal()
        try cache.flush()
        #expect(try JournalFixture.rawBodyLines(in: directory.url).count == 1)
        #expect(try cache.data(forKey: "k") == CheckedValue.pair(key: "k", sequence: Journal.rebuildThreshold))
        try cache.close()
        let found = try CacheInvariants.check(directory.url, storage: storage)
        #expect(found["k"]?.first?.sequence == Journal.rebuildThreshold)
    }

    @Test func aCompactedSegmentIsDeletedOnlyOnceWhatReplacedItIsDurable() throws {
        let fileSystem = FaultInjectingFileSystem()
        let cache = try open(.packed, fileSystem: fileSystem, segmentSize: 4096)
        for round in 0..<3 {
            for index in 0..<40 {
                try cache.setData(CheckedValue.pair(key: "k\(index)", sequence: round), forKey: "k\(index)")
            }
        }
        let segments = try JournalFixture.fileNames(in: directory.url).filter { $0.hasPrefix("segment-") }
        fileSystem.failCalls(named: ["fsync"], errno: EIO)
        expectError(.ioFailure) { try cache.compact() }
        #expect(
            try JournalFixture.fileNames(in: directory.url).filter { $0.hasPrefix("segment-") }.count >= segments.count)
        for index in 0..<40 {
            #expect(try cache.data(forKey: "k\(index)") == CheckedValue.pair(key: "k\(index)", sequence: 2))
        }
        fileSystem.heal()
        try cache.compact()
        #expect(
            try JournalFixture.fileNames(in: directory.url).filter { $0.hasPrefix("segment-") }.count < segments.count)
        try cache.close()
        let found = try CacheInvariants.check(directory.url, storage: .packed)
        #expect(found.count == 40)
        #expect(found.values.allSatisfy { $0.first?.sequence == 2 })
    }

    @Test func deadSegmentsAreDeletedAtOpenOnlyOnceTheJournalIsDurable() throws {
        let first = try open(.packed, fileSystem: FaultInjectingFileSystem(), segmentSize: 256)
        for index in 0..<20 { try first.setData(CheckedValue.pair(key: "k\(index)", sequence: 0), forKey: "k\(index)") }
        for index in 0..<20 { try first.setData(CheckedValue.pair(key: "k\(index)", sequence: 1), forKey: "k\(index)") }
        // Killed: the lines that made the first segments dead may be in the OS's memory only.
        first.simulateCrash()
        let before = try JournalFixture.fileNames(in: directory.url).filter { $0.hasPrefix("segment-") }
        let failing = FaultInjectingFileSystem()
        failing.failCalls(named: ["fsync"], errno: EIO)
        let second = try open(.packed, fileSystem: failing, segmentSize: 256)
        #expect(try JournalFixture.fileNames(in: directory.url).filter { $0.hasPrefix("segment-") } == before)
        second.simulateCrash()
        let third = try open(.packed, fileSystem: FaultInjectingFileSystem(), segmentSize: 256)
        #expect(
            try JournalFixture.fileNames(in: directory.url).filter { $0.hasPrefix("segment-") }.count < before.count)
        for index in 0..<20 {
            #expect(try third.data(forKey: "k\(index)") == CheckedValue.pair(key: "k\(index)", sequence: 1))
        }
    }
}
