import SwiftyCacheTestSupport
import Testing

@testable import SwiftyCacheCore

/// Keys held in their record: up to 32 bytes as they are, 34 to 64 lower-case hexadecimal
/// digits packed two to a byte; every other key in the arena. The form follows from the key, so
/// that a lookup compares like with like.
@Suite struct InlineKeyTests {
    static func inline(_ key: String) -> InlineKey? {
        var key = key
        return key.withUTF8 { InlineKey($0) }
    }

    static func hex(_ count: Int, seed: UInt64 = 1) -> String {
        var generator = SplitMix(state: seed)
        var text = ""
        while text.count < count { text += String(generator.next(), radix: 16) }
        return String(text.prefix(count))
    }

    @Test(arguments: [
        ("a", false), (String(repeating: "k", count: 32), false), (hex(32), false), (hex(34), true),
        (hex(64), true),
    ])
    func keysWithAnInlineFormRoundTripThroughIt(key: String, packed: Bool) throws {
        let form = try #require(Self.inline(key))
        #expect(form.isPackedHex == packed)
        let back = form.withKey(length: key.utf8.count) { String(decoding: $0, as: UTF8.self) }
        #expect(back == key)
    }

    @Test(arguments: [
        String(repeating: "k", count: 33),  // too long to hold as it is, not hexadecimal
        hex(63),  // an odd number of digits
        hex(66),  // more than 32 bytes packed
        hex(64).uppercased(),  // upper-case digits would not unpack to the same key
        hex(63) + "g",
    ])
    func otherKeysGoToTheArena(key: String) {
        #expect(Self.inline(key) == nil)
    }

    /// Eight digits are packed at a time: every length, every digit at every place, and one
    /// byte that is not a lower-case digit at any place.
    @Test func packingChecksAndKeepsEveryDigitAtEveryPlace() throws {
        var generator = SplitMix(state: 7)
        let digits = Array("0123456789abcdef".utf8)
        for length in stride(from: 34, through: 64, by: 2) {
            for _ in 0..<50 {
                let bytes = (0..<length).map { _ in digits[Int(generator.next() % 16)] }
                let key = String(decoding: bytes, as: UTF8.self)
                let form = try #require(Self.inline(key), "\(key)")
                #expect(form.withKey(length: length) { Array($0) } == bytes)
                var spoiled = bytes
                let place = Int(generator.next() % UInt64(length))
                spoiled[place] = Array("gz/:`G-_A\u{7F}".utf8)[Int(generator.next() % 10)]
                #expect(Self.inline(String(decoding: spoiled, as: UTF8.self)) == nil, "\(spoiled)")
            }
        }
        // A byte with its high bit set, in a lane that would otherwise read as a digit.
        var bytes = Array(Self.hex(64).utf8)
        bytes[5] = 0xB0
        #expect(bytes.withUnsafeBufferPointer { InlineKey($0) } == nil)
    }

    @Test func aTableHoldsInlineKeysInTheirRecordsAndFindsEachFormOnlyAsItself() {
        var table = EntryTable()
        let keys = [
            "short", Self.hex(64, seed: 1), Self.hex(64, seed: 2), Self.hex(40), Self.hex(63) + "g",
            String(repeating: "k", count: 33), Self.hex(64, seed: 1).uppercased(),
        ]
        let indices = keys.map { table.insert(key: $0, valueCount: 1) }
        for (key, index) in zip(keys, indices) {
            #expect(table.index(of: key) == index)
            #expect(table.key(at: index) == key)
        }
        // Only the last three are in the arena, each with its length byte.
        #expect(table.arena.count == keys.suffix(3).map { $0.utf8.count + 1 }.reduce(0, +))
        // Same lengths, other bytes: no match across forms or within one.
        for absent in [
            "shorT", Self.hex(64, seed: 3), Self.hex(63) + "h", String(repeating: "j", count: 33),
            String(Self.hex(40).reversed()), Self.hex(39) + "x",
        ] {
            #expect(table.index(of: absent) == nil, "\(absent)")
        }
        #expect(table.invariantViolation() == nil)
        table.remove(at: indices[1])
        #expect(table.index(of: keys[1]) == nil)
        #expect(table.index(of: keys[2]) == indices[2])
        #expect(table.invariantViolation() == nil)
    }
}
