import Dispatch
import Foundation
import SwiftyCacheCore
import SwiftyCacheTestSupport
import Synchronization
import Testing

@Suite(.tags(.addressSanitized, .concurrency)) struct ConcurrencyTests {
    let directory = TemporaryDirectory()

    @Test(arguments: bothStorages) func readersNeverSeeAMixOfOldAndNewSlots(storage: DiskLRUCache.Storage) throws {
        let cache = try openCache(directory.url, storage: storage)
        try cache.set("k", "0", "0")
        let mixes = Atomic<Int>(0)
        let reads = Atomic<Int>(0)
        DispatchQueue.concurrentPerform(iterations: 4) { worker in
            for version in 1...300 {
                if worker == 0 {
                    try? cache.set("k", "\(version)", "\(version)")
                } else if let values = try? cache.strings("k") {
                    reads.add(1, ordering: .relaxed)
                    if values[0] != values[1] { mixes.add(1, ordering: .relaxed) }
                }
            }
        }
        #expect(mixes.load(ordering: .relaxed) == 0)
        #expect(reads.load(ordering: .relaxed) > 0)
        #expect(try cache.strings("k") == ["300", "300"])
    }

    @Test(arguments: bothStorages) func mixedOperationsFromManyThreadsKeepTheInvariants(storage: DiskLRUCache.Storage)
        throws
    {
        let cache = try openCache(directory.url, maxSize: 2_000, storage: storage)
        let failures = LockedState<[String]>([])
        DispatchQueue.concurrentPerform(iterations: 8) { worker in
            var generator = SystemRandomNumberGenerator()
            for step in 0..<250 {
                let key = "key\(Int.random(in: 0..<20, using: &generator))"
                do {
                    switch (worker + step) % 5 {
                    case 0, 1:
                        // Each value names its key, so a mixed-up entry is detected below.
                        do {
                            try cache.set(key, "\(key):\(step)", String(repeating: "x", count: step % 50))
                        } catch let error as CacheError where error.code == .editInProgress {}
                    case 2:
                        if let values = try cache.strings(key), !values[0].hasPrefix(key + ":") {
                            failures.withLock { $0.append("\(key) holds \(values[0])") }
                        }
                    case 3:
                        try cache.removeValue(forKey: key)
                    default:
                        if let editor = try cache.edit(forKey: key) {
                            try editor.setString("\(key):edit", at: 0)
                            if step % 2 == 0 { editor.abort() } else { _ = try? editor.commit() }
                        }
                    }
                } catch {
                    failures.withLock { $0.append("\(error)") }
                }
            }
        }
        #expect(failures.withLock { $0 } == [])
        try cache.flush()
        #expect(cache.size <= 2_000)
        #expect(cache.size == (try storedValueBytes(cache, in: directory.url, storage: storage)))
        let keys = try cache.keys()
        #expect(keys.count == cache.count)
        try cache.close()
        let reopened = try openCache(directory.url, maxSize: 2_000, storage: storage)
        #expect(try reopened.keys() == keys)
    }

    @Test func asyncCallsRunTheirIOOffTheCallersThreadAndOffTheCooperativePool() async throws {
        // The awaiting task runs on the cooperative pool, which is not the I/O pool...
        #expect(!IOThreadPool.isCurrentThreadInPool)
        // ...and the offloaded work runs on one of the I/O pool's threads.
        let onIOPool = try await DiskLRUCache.offload { IOThreadPool.isCurrentThreadInPool }
        #expect(onIOPool)
    }

    @Test(arguments: bothStorages) func aBurstOfTenThousandAsyncReadsKeepsTheThreadCountBounded(
        storage: DiskLRUCache.Storage
    ) async throws {
        let cache = try openCache(directory.url, storage: storage)
        for i in 0..<50 { try cache.set("k\(i)", "v\(i)", "w") }
        let peak = LockedState(0)
        let pool = IOThreadPool.shared
        try await withThrowingTaskGroup(of: Void.self) { group in
            for i in 0..<10_000 {
                group.addTask {
                    let values = try await cache.data(forKey: "k\(i % 50)")
                    #expect(values != nil)
                    let now = pool.threadCount
                    peak.withLock { $0 = max($0, now) }
                }
            }
            try await group.waitForAll()
        }
        print("10,000 async reads: I/O pool at most \(peak.withLock { $0 }) threads (limit \(pool.limit))")
        #expect(peak.withLock { $0 } <= pool.limit)
        #expect(peak.withLock { $0 } >= 1)
        // The whole process's thread count is measured alone in a worker process
        // (ReliabilityTests, `aBurstOfAsyncReadsAddsNoThreadsBeyondThePools`): here, other
        // suites running in parallel start threads of their own.
    }

    @Test(arguments: bothStorages) func aTaskCancelledBeforeItsIOStartsThrowsAndDoesNothing(
        storage: DiskLRUCache.Storage
    ) async throws {
        let cache = try openCache(directory.url, storage: storage)
        // Cancelled before the call: nothing is queued.
        let early = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            try await cache.setData([Data("a".utf8), Data("b".utf8)], forKey: "early")
        }
        await #expect(throws: CancellationError.self) { try await early.value }
        #expect(try await !cache.containsValue(forKey: "early"))
        // Cancelled while queued behind a busy pool: the job sees it before it starts.
        let pool = IOThreadPool(limit: 1)
        let release = DispatchSemaphore(value: 0)
        let busy = DispatchSemaphore(value: 0)
        pool.submit {
            busy.signal()
            release.wait()
        }
        busy.wait()  // the pool's one thread is now held
        let ran = LockedState(false)
        let queued = Task {
            try await DiskLRUCache.offload(on: pool) { ran.withLock { $0 = true } }
        }
        queued.cancel()
        release.signal()
        await #expect(throws: CancellationError.self) { try await queued.value }
        #expect(!ran.withLock { $0 })
    }

    @Test func aFinishedAsyncCallKeepsNothingItCapturedAlive() async throws {
        final class Marker: Sendable {}
        weak var cache: DiskLRUCache?
        weak var marker: Marker?
        do {
            let opened = try DiskLRUCache(directory: directory.url, appVersion: 1, valueCount: 1, maxSize: 1 << 20)
            let captured = Marker()
            cache = opened
            marker = captured
            // Fewer calls than the pool's trim threshold: their jobs would otherwise stay queued.
            for index in 0..<3 {
                try await opened.setData([Data("v\(index)".utf8)], forKey: "k\(index)")
                _ = try await DiskLRUCache.offload { _ = captured }
            }
            try await opened.close()
        }
        // The pool's thread lets go of a job just after resuming its caller: wait for that.
        let deadline = ContinuousClock.now + .seconds(10)
        while (cache != nil || marker != nil) && ContinuousClock.now < deadline { await Task.yield() }
        #expect(cache == nil, "a finished job still holds the cache")
        #expect(marker == nil, "a finished job still holds what it captured")
    }

    @Test(arguments: bothStorages) func asyncAPIRoundTrips(storage: DiskLRUCache.Storage) async throws {
        let cache = try openCache(directory.url, storage: storage)
        try await cache.setData([Data("a".utf8), Data("b".utf8)], forKey: "k")
        try await cache.setPartialData([1: Data("c".utf8)], forKey: "k")
        #expect(try await cache.data(forKey: "k") == [Data("a".utf8), Data("c".utf8)])
        let snapshot = try await cache.snapshot(forKey: "k")
        #expect(try snapshot?.readString(at: 1) == "c")
        #expect(try await cache.removeValue(forKey: "k"))
        try await cache.flush()
        try await withThrowingTaskGroup(of: Void.self) { group in
            for i in 0..<32 {
                group.addTask { try await cache.setData([Data("\(i)".utf8), Data()], forKey: "t\(i)") }
            }
            try await group.waitForAll()
        }
        #expect(cache.count == 32)
        try await cache.close()
    }
}
