import SwiftyCacheCore
import Testing

/// ``SlotLengths`` reads as the `[Int]` it replaced, whether its lengths are inline (one or two
/// slots) or in an array (more).
@Suite struct SlotLengthsTests {
    @Test(arguments: [0, 1, 2, 3, 7])
    func readsAndWritesAsAnArrayOfItsCount(count: Int) {
        var lengths = SlotLengths(repeating: 5, count: count)
        var array = [Int](repeating: 5, count: count)
        #expect(Array(lengths) == array)
        #expect(lengths.count == count)
        for slot in 0..<count {
            lengths[slot] = 100 * slot + 1
            array[slot] = 100 * slot + 1
        }
        #expect(Array(lengths) == array)
        #expect(SlotLengths(array) == lengths)
        #expect(lengths.total == array.reduce(0, +))
        #expect(lengths.description == array.description)
    }

    @Test func aCopyIsIndependent() {
        for count in [2, 3] {
            let original = SlotLengths(repeating: 1, count: count)
            var copy = original
            copy[count - 1] = 9
            #expect(original[count - 1] == 1)
            #expect(copy[count - 1] == 9)
        }
    }

    @Test func equalityAndHashingFollowTheLengths() {
        let two: SlotLengths = [3, 4]
        #expect(two == SlotLengths([3, 4]))
        #expect(two != [4, 3])
        #expect(two != [3, 4, 0])
        #expect(two.hashValue == SlotLengths([3, 4]).hashValue)
        #expect(Set([two, [3, 4], [1, 2, 3], [1, 2, 3]]).count == 2)
    }

    @Test func aTotalPastIntMaxIsNil() {
        #expect(SlotLengths([Int.max, 1]).total == nil)
        #expect(SlotLengths([1, 2, Int.max]).total == nil)
        #expect(SlotLengths([Int.max - 1, 1]).total == Int.max)
    }
}
