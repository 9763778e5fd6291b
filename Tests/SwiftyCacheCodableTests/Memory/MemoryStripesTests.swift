import Dispatch
import Foundation
import SwiftyCacheCore
import SwiftyCacheTestSupport
import Synchronization
import Testing

@testable import SwiftyCacheCodable

/// The memory tier split by key hash: the limits shared out exactly, each stripe evicting on
/// its own, the counters added up, and small tiers kept whole (exact LRU order).
@Suite(.tags(.concurrency, .lockFreeReads)) struct MemoryStripesTests {
    let directory = TemporaryDirectory()

    @Test func smallTiersKeepOneStripeAndLargeOnesSplit() {
        #expect(MemoryStripes<Int, String>(countLimit: 100, byteLimit: 1_000).stripes.count == 1)
        #expect(MemoryStripes<Int, String>(countLimit: 511, byteLimit: nil).stripes.count == 1)
        // A power of two at most: a key's stripe is the low bits of its hash.
        #expect(MemoryStripes<Int, String>(countLimit: 1_000, byteLimit: nil).stripes.count == 2)
        #expect(MemoryStripes<Int, String>(countLimit: 3_000, byteLimit: nil).stripes.count == 8)
        #expect(MemoryStripes<Int, String>(countLimit: 100_000, byteLimit: 7).stripes.count == 16)
    }

    @Test func everyStripeGetsKeys() {
        let stripes = MemoryStripes<Int, String>(countLimit: 4_096, byteLimit: nil)
        #expect(stripes.stripes.count == 16)
        let used = Set((0..<1_000).map { stripes.stripeIndex(for: $0) })
        #expect(used == Set(0..<16))
    }

    @Test func aWorkingSetThatFitsTheLimitStaysWholeInMemory() throws {
        let limit = 4_096
        let cache = try ObjectCache<Int, String>(directory: directory.url, configuration: .init(memoryLimit: limit))
        #expect(cache.memory.stripes.count == 16)
        for key in 0..<limit { cache.setUnsaved("v\(key)", forKey: key) }  // in memory only, unsaved
        #expect(cache.memoryCount == limit)
        #expect(cache.statistics.saves == 0)  // nothing had to make room
        for key in 0..<limit { _ = try cache.value(forKey: key) }
        #expect(cache.statistics.memoryHits == limit)
        #expect(cache.statistics.diskHits == 0)
        #expect(cache.statistics.memoryEvictions == 0)
    }

    @Test func theByteLimitHoldsOverAllStripes() throws {
        let cache = try ObjectCache<Int, String>(
            directory: directory.url, configuration: .init(memoryLimit: 1_024, memoryByteLimit: 4_000))
        for key in 0..<1_024 { try cache.set(String(repeating: "x", count: 20), forKey: key) }
        // Each value encodes to 22 bytes of JSON: 181 fit in 4,000 bytes.
        #expect(cache.memoryCount == 4_000 / 22)
        #expect(cache.memory.totals.cost.load(ordering: .relaxed) <= 4_000)
    }

    @Test func aStripedTierHoldsItsLimitAndCountsEveryHit() throws {
        let limit = 1_024
        let cache = try ObjectCache<Int, String>(directory: directory.url, configuration: .init(memoryLimit: limit))
        #expect(cache.memory.stripes.count == 4)
        for key in 0..<(2 * limit) { try cache.set("v\(key)", forKey: key) }
        // Each stripe keeps its share of the most recent values.
        #expect(cache.memoryCount == limit)
        let inMemory = (0..<(2 * limit)).filter { key in cache.memory.withLock(for: key) { $0.contains(key) } }
        #expect(inMemory.count == limit)
        // Four threads read the values in memory at once; every read is a counted hit.
        let before = cache.statistics.memoryHits
        DispatchQueue.concurrentPerform(iterations: 4) { worker in
            for key in inMemory where key % 4 == worker { _ = try? cache.value(forKey: key) }
        }
        #expect(cache.statistics.memoryHits - before == limit)
        #expect(cache.statistics.diskHits == 0)
    }

    @Test func valuesHitByConcurrentReadersOutliveTheOnesNotHit() throws {
        // One stripe, so that which values go is exact (with several, each stripe's share of
        // the new keys depends on the process's hash seed).
        let limit = 256
        let cache = try ObjectCache<Int, String>(directory: directory.url, configuration: .init(memoryLimit: limit))
        #expect(cache.memory.stripes.count == 1)
        for key in 0..<limit { try cache.set("v\(key)", forKey: key) }
        // Four threads hit the even keys at once; after the first reads the stripe's gate is
        // open and they read without its mutex.
        let hot = (0..<limit).filter { $0 % 2 == 0 }
        DispatchQueue.concurrentPerform(iterations: 4) { worker in
            for (position, key) in hot.enumerated() where position % 4 == worker { _ = try? cache.value(forKey: key) }
        }
        #expect(cache.statistics.memoryHits == hot.count)
        #expect(cache.memory.stripes[0].isGateOpen)
        // As many new keys as odd ones: every value not hit goes, every value hit stays.
        for key in limit..<(limit + limit / 2) { try cache.set("v\(key)", forKey: key) }
        let kept = (0..<limit).filter { key in cache.memory.inspect(for: key) { $0.contains(key) } }
        #expect(kept == hot)
        #expect(cache.memoryCount == limit)
    }

    @Test func eachStripeEvictsItsLeastRecentlyUsedSavedValueFirst() throws {
        let limit = 512
        let cache = try ObjectCache<Int, String>(directory: directory.url, configuration: .init(memoryLimit: limit))
        #expect(cache.memory.stripes.count == 2)
        for key in 0..<limit { try cache.set("v\(key)", forKey: key) }
        // Touch the older half, then add as many new keys as a stripe can hold over its share:
        // the untouched half goes first, in every stripe.
        for key in 0..<(limit / 2) { _ = try cache.value(forKey: key) }
        for key in limit..<(limit + limit / 4) { try cache.set("v\(key)", forKey: key) }
        let evicted = (0..<limit).filter { key in !cache.memory.withLock(for: key) { $0.contains(key) } }
        #expect(evicted.count == limit / 4)
        #expect(evicted.allSatisfy { $0 >= limit / 2 })
    }
}
