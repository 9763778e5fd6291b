import Foundation
import SwiftyCacheCore
import SwiftyCacheTestSupport
import Testing

@testable import SwiftyCacheCodable

/// One stripe of the memory tier without a disk: least recently used first, with a second
/// chance for values hit since eviction last passed them (a hit only sets a bit), the value
/// just stored going last, unsaved values handed back instead of dropped.
@Suite(.tags(.concurrency, .lockFreeReads)) struct MemoryTierTests {
    let now = Date(timeIntervalSince1970: 1_000)

    func tier(limit: Int, bytes: Int? = nil, saved keys: [String]) -> MemoryTier<String, String> {
        var tier = MemoryTier<String, String>(countLimit: limit, byteLimit: bytes)
        for key in keys {
            tier.store("v-\(key)", forKey: key, isUnsaved: false, cost: 10, expires: nil, created: .distantPast)
        }
        return tier
    }

    func keys(_ tier: borrowing MemoryTier<String, String>) -> [String] {
        tier.items.indicesInLRUOrder.compactMap { tier.items.key(at: $0) }
    }

    func hit(_ tier: borrowing MemoryTier<String, String>, _ key: String) -> String? {
        tier.freshValue(key, hash: key.hashValue, clock: { now })
    }

    @Test func aHitMovesNothingAndAValueHitOutlivesTheOnesNotHit() {
        var tier = tier(limit: 3, saved: ["a", "b", "c"])
        #expect(hit(tier, "a") == "v-a")
        #expect(keys(tier) == ["a", "b", "c"])  // the hit only set a bit
        tier.store("v-d", forKey: "d", isUnsaved: false, cost: 10, expires: nil, created: .distantPast)
        #expect(tier.trim().isEmpty)
        // "a" got its second chance and became the newest but one; "b" went.
        #expect(keys(tier) == ["c", "d", "a"])
        #expect(tier.statistics.memoryEvictions == 1)
        // Its bit was spent: unless hit again, it goes in its turn.
        tier.store("v-e", forKey: "e", isUnsaved: false, cost: 10, expires: nil, created: .distantPast)
        tier.store("v-f", forKey: "f", isUnsaved: false, cost: 10, expires: nil, created: .distantPast)
        #expect(tier.trim().isEmpty)
        #expect(keys(tier) == ["a", "e", "f"])
        tier.store("v-g", forKey: "g", isUnsaved: false, cost: 10, expires: nil, created: .distantPast)
        #expect(tier.trim().isEmpty)
        #expect(keys(tier) == ["e", "f", "g"])
    }

    @Test func aStoreDoesNotEvictTheValueItStoredWhenEveryOtherWasHit() {
        var tier = tier(limit: 2, saved: ["a", "b"])
        _ = hit(tier, "a")
        _ = hit(tier, "b")
        tier.store("v-c", forKey: "c", isUnsaved: false, cost: 10, expires: nil, created: .distantPast)
        #expect(tier.trim().isEmpty)
        // Both old values had a second chance (and moved past the new one); the eldest of them
        // then went, not the new value.
        #expect(keys(tier) == ["c", "b"])
    }

    @Test func theNewestGoesLastAndOnlyIfTheLimitsNeedIt() {
        // A value alone over the byte limit is evicted as a last resort.
        var tier = MemoryTier<String, String>(countLimit: 10, byteLimit: 15)
        tier.store("v-a", forKey: "a", isUnsaved: false, cost: 10, expires: nil, created: .distantPast)
        tier.store("v-b", forKey: "b", isUnsaved: false, cost: 20, expires: nil, created: .distantPast)
        #expect(tier.trim().isEmpty)
        #expect(keys(tier).isEmpty)
        #expect(tier.totalCost == 0)
    }

    @Test func unsavedValuesAreHandedBackNotDroppedEvenAfterTheirSecondChance() {
        var tier = MemoryTier<String, String>(countLimit: 1, byteLimit: nil)
        tier.store("v-a", forKey: "a", isUnsaved: true, cost: 0, expires: nil, created: .distantPast)
        _ = hit(tier, "a")
        tier.store("v-b", forKey: "b", isUnsaved: true, cost: 0, expires: nil, created: .distantPast)
        let mustSave = tier.trim()
        #expect(mustSave.map(\.key) == ["a"])
        #expect(tier.count == 2)  // still in memory until saved
        tier.markSaved("a", version: mustSave[0].version, cost: 10)
        let removed = tier.removeIfSaved("a")
        #expect(removed)
        #expect(keys(tier) == ["b"])
    }

    @Test func aPendingSaveCarriesItsKeysHashAndASaveByThatHashFindsTheValue() {
        var tier = MemoryTier<String, String>(countLimit: 2, byteLimit: nil)
        for key in ["a", "b", "c"] {
            tier.store(
                "v-\(key)", forKey: key, hash: key.hashValue, isUnsaved: true, cost: 0, expires: nil, created: now)
        }
        // Handed back by a trim, listed as unsaved, or asked for by key: each with the hash
        // the key was stored under.
        let handedBack = tier.trim()
        #expect(handedBack.map(\.key) == ["a"])
        let pending = handedBack + tier.unsaved + [tier.pendingSave(for: "c")].compactMap { $0 }
        #expect(pending.map(\.key) == ["a", "a", "b", "c", "c"])
        for save in pending { #expect(save.hash == save.key.hashValue) }
        for save in tier.unsaved {
            let heldBefore = tier.holdsUnsaved(save.key, hash: save.hash, version: save.version)
            tier.markSaved(save.key, hash: save.hash, version: save.version, cost: 5)
            let heldAfter = tier.holdsUnsaved(save.key, hash: save.hash, version: save.version)
            #expect(heldBefore && !heldAfter)
        }
        let stillUnsaved = tier.unsaved.count
        #expect(stillUnsaved == 0)
        #expect(tier.totalCost == 15)
        let removed = tier.removeIfSaved("b", hash: "b".hashValue)
        #expect(removed)
        #expect(tier.totalCost == 10)
        #expect(keys(tier) == ["a", "c"])
    }

    @Test func aWalkOverValuesAllHitEndsAndEvictsInOrder() {
        let names = (0..<100).map { "k\($0)" }
        var tier = tier(limit: 100, saved: names)
        for name in names { _ = hit(tier, name) }
        tier.store("v-new", forKey: "new", isUnsaved: false, cost: 10, expires: nil, created: .distantPast)
        #expect(tier.trim().isEmpty)
        // Every old value had its second chance in order; the eldest then went.
        #expect(keys(tier) == ["new"] + names.dropFirst())
        #expect(tier.statistics.memoryEvictions == 1)
    }

    @Test func aReusedSlotStartsWithoutTheRemovedValuesBit() {
        var tier = tier(limit: 2, saved: ["a", "b"])
        _ = hit(tier, "a")
        tier.remove("a")
        // Takes a's slot.
        tier.store("v-c", forKey: "c", isUnsaved: false, cost: 10, expires: nil, created: .distantPast)
        tier.store("v-d", forKey: "d", isUnsaved: false, cost: 10, expires: nil, created: .distantPast)
        #expect(tier.trim().isEmpty)
        #expect(keys(tier) == ["c", "d"])  // "b", the eldest, went: c inherited no second chance
        tier.store("v-e", forKey: "e", isUnsaved: false, cost: 10, expires: nil, created: .distantPast)
        #expect(tier.trim().isEmpty)
        #expect(keys(tier) == ["d", "e"])
    }

    @Test func expiredValuesAreFoundExpiredAndRemovedOnlyIfStillExpired() {
        var tier = MemoryTier<String, String>(countLimit: 10, byteLimit: nil)
        tier.store("old", forKey: "k", isUnsaved: false, cost: 3, expires: now, created: .distantPast)
        #expect(hit(tier, "k") == nil)  // the fast path leaves expiry to find
        guard case .expired(wasUnsaved: false) = tier.find("k", hash: "k".hashValue, now: now) else {
            Issue.record("an expired value reads as expired")
            return
        }
        let removedEarly = tier.removeIfExpired("k", now: now.addingTimeInterval(-1))
        #expect(!removedEarly)
        tier.store("new", forKey: "k", isUnsaved: false, cost: 3, expires: nil, created: .distantPast)
        let removedReplacement = tier.removeIfExpired("k", now: now)
        #expect(!removedReplacement)  // replaced meanwhile: kept
        guard case .hit("new") = tier.find("k", hash: "k".hashValue, now: now) else {
            Issue.record("the replacement is a hit")
            return
        }
    }
}
