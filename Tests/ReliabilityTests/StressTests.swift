import Dispatch
import Foundation
import SwiftyCacheCodable
import SwiftyCacheCore
import SwiftyCacheTestSupport
import Synchronization
import Testing

extension Slow {
    /// Sixteen threads of mixed operations (set, partial set, snapshot, remove, edit, abort,
    /// evictAll, setMaxSize, flush) on 64 overlapping keys under a small limit, for a bounded
    /// time, then the invariants. Also run under ThreadSanitizer (docs/RELIABILITY.md).
    /// `SWIFTYCACHE_STRESS_SECONDS` sets the duration (default 2).
    @Suite(.tags(.concurrency, .lockFreeReads, .slow), .fullRunOnly) struct StressTests {
        static let seconds = ProcessInfo.processInfo.environment["SWIFTYCACHE_STRESS_SECONDS"].flatMap(Double.init) ?? 2

        /// Packed storage with an inline limit that sends the larger values to files, and small
        /// segments that roll and get compacted (the flush operations compact too).
        @Test(arguments: [DiskLRUCache.Storage.files, .packed(inlineLimit: 600)])
        func engineUnderSixteenThreads(storage: DiskLRUCache.Storage) throws {
            let directory = TemporaryDirectory()
            var options = DiskLRUCache.Options(storage: storage)
            options.packedSegmentSize = 16 << 10
            let cache = try DiskLRUCache(
                directory: directory.url, appVersion: 1, valueCount: 2, maxSize: 60_000, options: options)
            let operations = Atomic(0)
            let failures = LockedState<[String]>([])
            let deadline = DispatchTime.now() + Self.seconds
            DispatchQueue.concurrentPerform(iterations: 16) { worker in
                var generator = SystemRandomNumberGenerator()
                var sequence = worker * 10_000_000
                var done = 0
                // At least 300 operations each, then until the deadline: a worker that starts late
                // (other tests hold the threads) still does its share.
                while done < 300 || DispatchTime.now() < deadline {
                    done += 1
                    sequence += 1
                    let key = "key\(Int.random(in: 0..<64, using: &generator))"
                    do {
                        switch Int.random(in: 0..<100, using: &generator) {
                        case 0..<35:
                            do {
                                try cache.setData(
                                    (0..<2).map {
                                        CheckedValue.make(
                                            key: key, slot: $0, sequence: sequence, fillerLength: sequence % 900)
                                    },
                                    forKey: key)
                            } catch let error as CacheError where error.code == .editInProgress {}
                        case 35..<45:
                            do {
                                try cache.setPartialData(
                                    [1: CheckedValue.make(key: key, slot: 1, sequence: sequence, fillerLength: 10)],
                                    forKey: key)
                            } catch let error as CacheError
                                where error.code == .editInProgress || error.code == .entryNotFound
                            {}
                        case 45..<80:
                            if let snapshot = try cache.snapshot(forKey: key) {
                                for slot in 0..<2 {
                                    let value = try snapshot.readData(at: slot)
                                    guard let parsed = CheckedValue.parse(value), parsed.key == key, parsed.slot == slot
                                    else {
                                        failures.withLock { $0.append("bad read of \(key) slot \(slot)") }
                                        continue
                                    }
                                }
                            }
                        case 80..<88:
                            try cache.removeValue(forKey: key)
                        case 88..<95:
                            if let editor = try cache.edit(forKey: key) {
                                try editor.setData(
                                    CheckedValue.make(key: key, slot: 1, sequence: sequence, fillerLength: 5), at: 1)
                                if sequence % 2 == 0 { editor.abort() } else { _ = try? editor.commit() }
                            }
                        case 95..<97:
                            _ = try cache.keys()
                        case 97:
                            try cache.setMaxSize(sequence % 2 == 0 ? 30_000 : 60_000)
                        case 98 where sequence % 8 == 0:
                            try cache.evictAll()
                        default:
                            try cache.flush()
                            if sequence % 4 == 0 { try cache.compact() }
                        }
                    } catch {
                        failures.withLock { $0.append("\(error)") }
                    }
                    operations.add(1, ordering: .relaxed)
                }
            }
            #expect(failures.withLock { $0 } == [])
            try cache.close()
            try CacheInvariants.check(directory.url, storage: storage)
            print(
                "stress: engine, \(storage), 16 threads, \(operations.load(ordering: .relaxed)) operations in \(Self.seconds) s"
            )
        }

        @Test func objectCacheUnderEightTasks() async throws {
            let directory = TemporaryDirectory()
            let cache = try ObjectCache<Int, String>(
                directory: directory.url, configuration: .init(maxDiskSize: 200_000, memoryLimit: 10))
            let operations = Counter()
            let deadline = ContinuousClock.now + .seconds(Self.seconds)
            try await withThrowingTaskGroup(of: Void.self) { group in
                for _ in 0..<8 {
                    group.addTask {
                        var done = 0
                        while done < 150 || ContinuousClock.now < deadline {
                            done += 1
                            let key = Int.random(in: 0..<40)
                            switch Int.random(in: 0..<6) {
                            case 0: try await cache.set("value of \(key)", forKey: key)
                            case 1: cache.setUnsaved("value of \(key)", forKey: key)
                            case 2, 3:
                                if let value = try await cache.value(forKey: key) {
                                    #expect(value == "value of \(key)")
                                }
                            case 4: try await cache.save()
                            default: _ = try await cache.removeValue(forKey: key)
                            }
                            operations.value.add(1, ordering: .relaxed)
                        }
                    }
                }
                try await group.waitForAll()
            }
            try await cache.save()
            for key in try await cache.keys() { #expect(try await cache.value(forKey: key) == "value of \(key)") }
            try await cache.close()
            try CacheInvariants.check(directory.url, checksValues: false, storage: .packed)
            print(
                "stress: ObjectCache, 8 tasks, \(operations.value.load(ordering: .relaxed)) operations in \(Self.seconds) s"
            )
        }
    }
}

/// A counter tasks can share.
final class Counter: Sendable {
    let value = Atomic(0)
}
