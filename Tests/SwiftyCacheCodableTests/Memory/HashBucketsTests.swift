import SwiftyCacheTestSupport
import Testing

@testable import SwiftyCacheCodable

/// The index's hash table: every recorded slot stays reachable through inserts, removals and
/// growth, whatever the hashes, and a removal leaves no tombstone behind.
@Suite struct HashBucketsTests {
    /// A table over slots whose hashes the test chooses; a slot's key is its number.
    struct Model {
        var buckets = HashBuckets()
        var hashes: [Int] = []
        var live: Set<Int> = []

        mutating func insert(hash: Int) -> Int {
            let slot = hashes.count
            hashes.append(hash)
            buckets.insert(slot: slot, hash: hash)
            live.insert(slot)
            return slot
        }

        mutating func remove(_ slot: Int) {
            buckets.remove(slot: slot)
            live.remove(slot)
        }

        func find(_ slot: Int) -> Int? { buckets.find(hash: hashes[slot]) { $0 == slot } }

        func violation() -> String? { buckets.invariantViolation() }
    }

    @Test func entriesWithOneHashAreAllFoundAndSurviveRemovalsInTheMiddleOfTheirCluster() {
        var model = Model()
        let slots = (0..<20).map { _ in model.insert(hash: 42) }
        #expect(model.buckets.count == 20)
        for slot in slots { #expect(model.find(slot) == slot) }
        // Removing from the middle shifts the rest of the cluster back: all are still found.
        for slot in slots where slot % 3 == 1 { model.remove(slot) }
        for slot in slots {
            #expect(model.find(slot) == (slot % 3 == 1 ? nil : slot))
        }
        #expect(model.buckets.count == slots.count - slots.filter { $0 % 3 == 1 }.count)
        #expect(model.violation() == nil)
    }

    @Test func hashesSharingTheirLowBitsSpreadOverTheTable() {
        // The keys of one stripe share hash % stripes: the table must not pile them into a
        // sixteenth of its buckets. Count the probes a lookup of each needs.
        var model = Model()
        let slots = (0..<4_096).map { model.insert(hash: $0 &* 16 &+ 5) }
        var probes = 0
        for slot in slots {
            var steps = 0
            _ = model.buckets.find(hash: model.hashes[slot]) { candidate in
                steps += 1
                return candidate == slot
            }
            probes += steps
        }
        // Linear probing at three quarters full averages 2.5 probes for a hit; clustered by
        // the low bits it would need hundreds.
        #expect(Double(probes) / Double(slots.count) < 4)
        #expect(model.violation() == nil)
    }

    /// A bucket keeps 32 bits of the hash: hashes that differ only above them share a tag, so
    /// the caller's key comparison tells them apart; removal and growth use the full hashes.
    @Test func hashesThatDifferOnlyInTheirHighBitsAreToldApartByTheKey() {
        var model = Model()
        let slots = (0..<64).map { model.insert(hash: 0x1234_5678 &+ ($0 << 32)) }
        for slot in slots { #expect(model.find(slot) == slot) }
        for slot in slots where slot % 2 == 0 { model.remove(slot) }
        for slot in slots { #expect(model.find(slot) == (slot % 2 == 0 ? nil : slot)) }
        // A hash whose tag matches but was never recorded finds nothing.
        #expect(model.buckets.find(hash: 0x1234_5678 &+ (999 << 32)) { _ in false } == nil)
        #expect(model.violation() == nil)
    }

    @Test func aRemovalOfAnAbsentSlotChangesNothing() {
        var model = Model()
        let kept = model.insert(hash: 7)
        model.buckets.remove(slot: 1)  // never recorded
        model.remove(kept)
        model.buckets.remove(slot: kept)  // removed already
        #expect(model.buckets.count == 0)
        let again = model.insert(hash: 7)
        #expect(model.find(again) == again)
        #expect(model.find(kept) == nil)
    }

    @Test func randomChurnAgreesWithASetOfLiveSlots() {
        var generator = SplitMix(state: 11)
        var model = Model()
        for _ in 0..<20_000 {
            // Few distinct hashes force long clusters and wrap-around at the table's end.
            if model.live.isEmpty || generator.next() % 3 != 0 {
                _ = model.insert(hash: Int(truncatingIfNeeded: generator.next() % 64) &* 0x1000_0000_0000_0000)
            } else {
                let victims = Array(model.live)
                model.remove(victims[Int(generator.next() % UInt64(victims.count))])
            }
        }
        #expect(model.buckets.count == model.live.count)
        for slot in model.hashes.indices { #expect(model.find(slot) == (model.live.contains(slot) ? slot : nil)) }
        #expect(model.violation() == nil)
    }

    @Test func reservingCapacityAvoidsGrowthAndKeepsEntries() {
        var model = Model()
        let first = model.insert(hash: 1)
        model.buckets.reserveCapacity(1_000)
        #expect(model.find(first) == first)
        for i in 0..<999 { _ = model.insert(hash: i &* 31) }
        #expect(model.buckets.count == 1_000)
        #expect(model.violation() == nil)
    }

    @Test func aProbeFindsAnEqualEntryOrTheBucketARecordFills() {
        var buckets = HashBuckets()
        buckets.insert(slot: 0, hash: 9)
        buckets.makeRoomForOneMore()
        // Same hash, another key: the probe passes it and stops at a vacant bucket.
        guard case .vacant(let bucket) = buckets.probe(hash: 9, { _ in false }) else {
            Issue.record("a probe that matches nothing must end at a vacant bucket")
            return
        }
        buckets.record(slot: 1, hash: 9, inBucket: bucket)
        #expect(buckets.count == 2)
        #expect(buckets.find(hash: 9) { $0 == 1 } == 1)
        #expect(buckets.find(hash: 9) { $0 == 0 } == 0)
        #expect(buckets.invariantViolation() == nil)
    }

    @Test func insertingIfAbsentKeepsTheFirstEntryOfAKey() {
        var dictionary = LRUDictionary<String, Int>()
        #expect(dictionary.insertIfAbsent(1, forKey: "a") != nil)
        #expect(dictionary.insertIfAbsent(2, forKey: "a") == nil)
        #expect(dictionary.count == 1)
        #expect(dictionary.index(of: "a").flatMap { dictionary.value(at: $0) } == 1)
        #expect(dictionary.invariantViolation() == nil)
    }

    @Test func theDictionaryFindsKeysByTheHashItIsGiven() {
        var dictionary = LRUDictionary<String, Int>()
        let index = dictionary.insert(1, forKey: "a")
        #expect(dictionary.index(of: "a", hash: "a".hashValue) == index)
        #expect(dictionary.index(of: "a") == index)
        // A wrong hash misses rather than finding another key's entry.
        #expect(dictionary.index(of: "a", hash: "a".hashValue &+ 1) == nil)
        #expect(dictionary.invariantViolation() == nil)
    }
}
