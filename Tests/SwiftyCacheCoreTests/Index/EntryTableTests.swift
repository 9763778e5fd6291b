import SwiftyCacheTestSupport
import Testing

@testable import SwiftyCacheCore

/// The index: records of plain integers (short and hexadecimal keys inside them), other
/// keys in one arena, a table of 8-byte buckets.
@Suite struct EntryTableTests {
    @Test func aRecordIsSeventyTwoBytesOfPlainIntegers() {
        #expect(MemoryLayout<EntryRecord>.size == 72)
        #expect(MemoryLayout<EntryRecord>.stride == 72)
        #expect(_isPOD(EntryRecord.self))
    }

    @Test func keysAreLengthPrefixedBytesBackToBack() {
        var arena = KeyArena()
        let first = Array("k1".utf8).withUnsafeBufferPointer { arena.append($0) }
        let long = [UInt8](repeating: UInt8(ascii: "a"), count: 200)
        let second = long.withUnsafeBufferPointer { arena.append($0) }
        #expect(first == 1)
        #expect(second == 5)  // after 02 'k' '1' and a two-byte length
        #expect(Array(arena.bytes.prefix(5)) == [2, UInt8(ascii: "k"), UInt8(ascii: "1"), 0xC8, 0x01])
        #expect(arena.count == 5 + 200)
    }

    @Test func entriesRoundTripTheirFieldsInlineAndSpilled() {
        var table = EntryTable()
        let small = table.insert(key: "small", valueCount: 2)
        table.setCommitted(
            small, lengths: [60, 280], location: ValueLocation(segment: 3, offset: 4096), sequenceNumber: 7)
        let wide = table.insert(key: "wide", valueCount: 2)
        table.setCommitted(wide, lengths: [5_000_000_000, 1], location: ValueLocation(segment: 1, offset: 1 << 33))
        let three = table.insert(key: "three", valueCount: 3)
        table.setCommitted(three, lengths: [1, 2, 3])
        #expect(table[small].lengths == [60, 280])
        #expect(table[small].location == ValueLocation(segment: 3, offset: 4096))
        #expect(table[small].sequenceNumber == 7)
        #expect(table[wide].lengths == [5_000_000_000, 1])
        #expect(table[wide].location == ValueLocation(segment: 1, offset: 1 << 33))
        #expect(table[three].lengths == [1, 2, 3])
        #expect(table.spilledLengths.count == 2)
        #expect(table.spilledOffsets.count == 1)
        // Back to values that fit: the side tables forget the entry.
        table.setCommitted(wide, lengths: [1, 1], location: ValueLocation(segment: 1, offset: 8))
        #expect(table.spilledLengths.count == 1)
        #expect(table.spilledOffsets.isEmpty)
        table.setEditor(small, 42)
        #expect(table[small].editorID == 42)
        #expect(table[small].isBeingEdited)
        #expect(table.invariantViolation() == nil)
        table.remove(at: three)
        table.remove(at: small)
        #expect(table.editors.isEmpty)
        #expect(table.spilledLengths.isEmpty)
        #expect(table.invariantViolation() == nil)
    }

    @Test func removedKeysAreCompactedAwayInPlace() {
        var table = EntryTable()
        let keys = (0..<3_000).map { "key-\($0)-" + String(repeating: "x", count: 90) }
        let indices = keys.map { table.insert(key: $0, valueCount: 1) }
        let full = table.arena.count
        for index in indices.indices where index % 4 != 0 { table.remove(at: indices[index]) }
        // Garbage past a quarter of the arena was slid away as it grew.
        #expect(table.arena.count < full / 2)
        #expect(table.arena.garbage * 4 <= table.arena.count)
        #expect(table.invariantViolation() == nil)
        for (number, key) in keys.enumerated() {
            #expect((table.index(of: key) != nil) == (number % 4 == 0), "\(key)")
        }
        for number in stride(from: 0, to: keys.count, by: 4) { #expect(table.key(at: indices[number]) == keys[number]) }
    }

    /// Random operations against a plain model: the entries, their fields and the LRU order
    /// agree after every step, and the invariant walk passes throughout.
    @Test(arguments: [1, 2, 3]) func randomOperationsMatchAModel(seed: UInt64) {
        var random = SplitMix(state: seed)
        var table = EntryTable()
        var model: [String: SlotLengths] = [:]
        var order: [String] = []  // least recently used first
        for step in 0..<20_000 {
            let key = "k\(random.next() % 600)-" + String(repeating: "z", count: Int(random.next() % 200))
            switch random.next() % 5 {
            case 0, 1:
                let lengths: SlotLengths =
                    random.next() % 10 == 0 ? [Int(random.next() % (1 << 40)), 2] : [Int(random.next() % 1000), 1]
                let index = table.indexInsertingIfAbsent(key: key, valueCount: 2)
                table.setCommitted(index, lengths: lengths, location: ValueLocation(segment: 1, offset: Int64(step)))
                table.touch(index)
                model[key] = lengths
                order.removeAll { $0 == key }
                order.append(key)
            case 2:
                if let index = table.index(of: key) {
                    table.remove(at: index)
                    model[key] = nil
                    order.removeAll { $0 == key }
                }
            case 3:
                if let index = table.index(of: key) {
                    table.touch(index)
                    order.removeAll { $0 == key }
                    order.append(key)
                }
            default:
                let victim = order.isEmpty ? nil : order[Int(random.next() % UInt64(order.count))]
                if let victim, let index = table.index(of: victim) {
                    #expect(table[index].lengths == model[victim])
                    #expect(table.key(at: index) == victim)
                }
            }
            if step % 2_000 == 0 { #expect(table.invariantViolation() == nil) }
        }
        #expect(table.invariantViolation() == nil)
        #expect(table.count == model.count)
        #expect(table.readableCount == model.count)
        #expect(table.indicesInLRUOrder.map { table.key(at: $0) } == order)
    }

    @Test func theInvariantWalkFindsBrokenStructures() {
        func filled() -> EntryTable {
            var table = EntryTable()
            for number in 0..<50 {
                let index = table.insert(key: "key\(number)", valueCount: 1)
                table.setCommitted(index, lengths: [number])
            }
            return table
        }
        #expect(filled().invariantViolation() == nil)
        var brokenLink = filled()
        brokenLink.records[3].next = EntryRecord.none
        #expect(brokenLink.invariantViolation() != nil)
        var movedKey = filled()
        movedKey.records[5].setKey(offset: movedKey.records[6].keyOffset, length: movedKey.records[6].keyLength)
        #expect(movedKey.invariantViolation() != nil)
        var lostReadable = filled()
        lostReadable.records[7].flags.remove(.readable)
        #expect(lostReadable.invariantViolation() != nil)
        var strayEditor = filled()
        strayEditor.editors[9] = 1
        #expect(strayEditor.invariantViolation() != nil)
    }
}
