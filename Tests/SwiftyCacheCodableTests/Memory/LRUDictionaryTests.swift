import Testing

@testable import SwiftyCacheCodable

/// The index's data structure: stable indices, recycled slots, LRU order.
@Suite struct LRUDictionaryTests {
    @Test func insertingIfAbsentFindsOrInsertsWithOneCall() {
        var dictionary = LRUDictionary<String, Int>()
        var made = 0
        let a = dictionary.indexInsertingIfAbsent("a") {
            made += 1
            return 1
        }
        let b = dictionary.indexInsertingIfAbsent("b") {
            made += 1
            return 2
        }
        let again = dictionary.indexInsertingIfAbsent("a") {
            made += 1
            return 99
        }
        #expect(again == a)
        #expect(made == 2)  // the value is made only for a new key
        #expect(dictionary.value(at: a) == 1)
        #expect(dictionary.value(at: b) == 2)
        #expect(dictionary.indicesInLRUOrder == [a, b])  // a new key is the newest; a hit does not move
        #expect(dictionary.count == 2)
    }

    @Test func freedSlotsAreReusedAndStorageOrderListsOnlyLiveEntries() {
        var dictionary = LRUDictionary<String, Int>()
        let indices = (0..<5).map { i in dictionary.indexInsertingIfAbsent("k\(i)") { i } }
        dictionary.remove(at: indices[1])
        dictionary.remove(at: indices[3])
        #expect(dictionary.indicesInStorageOrder == [indices[0], indices[2], indices[4]])
        let reused = dictionary.indexInsertingIfAbsent("new") { 42 }
        #expect(reused == indices[3])  // the last slot freed
        #expect(dictionary.index(of: "new") == reused)
        #expect(dictionary.index(of: "k3") == nil)
        #expect(dictionary.indicesInLRUOrder == [indices[0], indices[2], indices[4], reused])
        dictionary.touch(indices[0])
        #expect(dictionary.indicesInLRUOrder == [indices[2], indices[4], reused, indices[0]])
        #expect(dictionary.indicesInStorageOrder == [indices[0], indices[2], reused, indices[4]])
    }

    @Test func aValueIsReadInPlaceAndMovedOutWhenRemoved() {
        var dictionary = LRUDictionary<String, [Int]>()
        let a = dictionary.insert([1, 2, 3], forKey: "a")
        let b = dictionary.insert([4], forKey: "b")
        #expect(dictionary.withValue(at: a) { $0.count } == 3)
        #expect(dictionary.withValue(at: b) { $0.first } == 4)
        #expect(dictionary.withValue(at: 99) { $0.count } == nil)  // beyond the slots
        #expect(dictionary.remove(at: a) == [1, 2, 3])
        #expect(dictionary.withValue(at: a) { $0.count } == nil)  // a free slot
        #expect(dictionary.remove(at: a) == nil)
        #expect(dictionary.value(at: b) == [4])
        #expect(dictionary.invariantViolation() == nil)
    }

    @Test func aBrokenLRUListIsCaught() {
        var dictionary = LRUDictionary<String, Int>()
        let a = dictionary.insert(1, forKey: "a")
        dictionary.insert(2, forKey: "b")
        #expect(dictionary.invariantViolation() == nil)
        dictionary.links[a].next = -1  // the walk now stops after "a"
        #expect(dictionary.invariantViolation() != nil)
    }
}
