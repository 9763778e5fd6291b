import Testing

@testable import SwiftyCacheCore

/// One journal body line at a time, as `JournalParser.parseBodyLine` reads it: the lengths of
/// every slot count (one or two are held inline, more in an array), packed journals add the
/// record's segment and offset, and a line with too few or too many fields is corrupt.
@Suite struct JournalLineTests {
    private func parse(_ line: String, valueCount: Int, packed: Bool = false) -> Journal.Operation? {
        let bytes = Array(line.utf8)
        return bytes.withUnsafeBufferPointer { buffer in
            switch JournalParser.parseBodyLine(buffer[...], valueCount: valueCount, storesLocations: packed) {
            case .success(let parsed): parsed.key.elementsEqual("k".utf8) ? parsed.operation : nil
            case .failure: nil
            }
        }
    }

    @Test(arguments: [1, 2, 3, 5])
    func aCleanLineHoldsEachSlotsLength(valueCount: Int) {
        let lengths = (0..<valueCount).map { 10 * $0 + 7 }
        let line = "CLEAN k " + lengths.map(String.init).joined(separator: " ")
        #expect(parse(line, valueCount: valueCount) == .clean(lengths: SlotLengths(lengths)))
        // Java splits on single spaces and drops trailing empty fields.
        #expect(parse(line + "  ", valueCount: valueCount) == .clean(lengths: SlotLengths(lengths)))
        #expect(parse(line + " 1", valueCount: valueCount) == nil)
        let short = "CLEAN k " + lengths.dropLast().map(String.init).joined(separator: " ")
        #expect(parse(short, valueCount: valueCount) == nil)
    }

    @Test(arguments: [1, 2, 3, 5])
    func aPackedCleanLineEndsWithTheRecordsPlace(valueCount: Int) {
        let lengths = (0..<valueCount).map { 3 * $0 + 1 }
        let withoutPlace = "CLEAN k " + lengths.map(String.init).joined(separator: " ")
        let line = withoutPlace + " 4 8192"
        let place = ValueLocation(segment: 4, offset: 8192)
        #expect(
            parse(line, valueCount: valueCount, packed: true) == .clean(lengths: SlotLengths(lengths), location: place))
        #expect(parse(line + " 9", valueCount: valueCount, packed: true) == nil)
        // Without its place the line is short by two fields.
        #expect(parse(withoutPlace, valueCount: valueCount, packed: true) == nil)
    }

    @Test func aMoveLineHoldsOnlyThePlace() {
        #expect(parse("MOVE k 2 100", valueCount: 3, packed: true) == .move(ValueLocation(segment: 2, offset: 100)))
        #expect(parse("MOVE k 2", valueCount: 3, packed: true) == nil)
        #expect(parse("MOVE k 2 100", valueCount: 3) == nil)
        // A segment number past 32 bits is no segment.
        #expect(parse("MOVE k 4294967296 100", valueCount: 1, packed: true) == nil)
    }

    @Test func lengthsThatAddPastIntMaxAreCorrupt() {
        let half = String(Int.max / 2 + 1)
        #expect(parse("CLEAN k \(half) \(half)", valueCount: 2) == nil)
        #expect(parse("CLEAN k \(half) \(half) 1", valueCount: 3) == nil)
        let largest = Int.max / 2
        #expect(parse("CLEAN k \(largest) \(largest)", valueCount: 2) == .clean(lengths: [largest, largest]))
    }

    /// The key check reads eight bytes at a time: every byte value, at every position of a
    /// word and in the tail after it, beside printable neighbours, against the byte-by-byte rule.
    @Test func theKeyCheckAgreesWithTheRuleForEveryByteAndPosition() {
        func rule(_ key: [UInt8]) -> Bool {
            !key.isEmpty && key.allSatisfy { $0 > 0x20 && $0 < 0x7F && $0 != UInt8(ascii: "/") }
                && !(key.count <= 2 && key.allSatisfy { $0 == UInt8(ascii: ".") })
        }
        func check(_ key: [UInt8]) -> Bool { key.withUnsafeBufferPointer { CacheFileName.isReplayableKey($0[...]) } }
        for length in [1, 7, 8, 9, 16, 21] {
            for position in 0..<length {
                for byte in 0...255 {
                    for neighbour: UInt8 in [0x21, 0x7E, UInt8(ascii: "a")] {
                        var key = [UInt8](repeating: neighbour, count: length)
                        key[position] = UInt8(byte)
                        #expect(check(key) == rule(key), "\(key)")
                    }
                }
            }
        }
        for dots in [".", "..", "...", ".a"] { #expect(check(Array(dots.utf8)) == rule(Array(dots.utf8))) }
    }

    @Test func aKeyByteIsALowerCaseLetterADigitAnUnderscoreOrAHyphenAndNothingElse() {
        // Every byte, against the rule spelled out: the check is a bit mask.
        for value in 0...255 {
            let byte = UInt8(value)
            let allowed =
                (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte)
                || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte)
                || byte == UInt8(ascii: "_") || byte == UInt8(ascii: "-")
            #expect(Journal.isKeyByte(byte) == allowed, "byte \(value)")
        }
        #expect(Journal.isValidKey("a-z_0-9"))
        #expect(!Journal.isValidKey("A"))
        #expect(!Journal.isValidKey("a.b"))
        #expect(!Journal.isValidKey(""))
    }

    @Test func theWordAtATimeKeyCheckAgreesWithTheByteCheckAtEveryPosition() {
        // Every byte at every position of keys one to three words long (and a tail), among
        // neighbours at the edges of the ranges, so that a carry or a borrow between bytes shows.
        for length in [1, 7, 8, 9, 16, 23, 24, 33] {
            for position in Set([0, length / 2, length - 1]) {
                for neighbour in [UInt8(ascii: "-"), UInt8(ascii: "0"), UInt8(ascii: "9"), UInt8(ascii: "_")]
                    + [UInt8(ascii: "a"), UInt8(ascii: "z")]
                {
                    var key = [UInt8](repeating: neighbour, count: length)
                    for byte in 0...255 {
                        key[position] = UInt8(byte)
                        let expected = key.allSatisfy(Journal.isKeyByte)
                        #expect(key.withUnsafeBufferPointer(Journal.areKeyBytes) == expected, "\(key)")
                    }
                }
            }
        }
        #expect(Journal.isValidKey(String(repeating: "a-z_0-9", count: 17)))  // 119 bytes
        #expect(!Journal.isValidKey(String(repeating: "a", count: 121)))
        #expect(!Journal.isValidKey(String(repeating: "a", count: 40) + "é"))
    }
}
