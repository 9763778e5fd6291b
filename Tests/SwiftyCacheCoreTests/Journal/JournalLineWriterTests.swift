import SwiftyCacheTestSupport
import Testing

@testable import SwiftyCacheCore

/// Journal lines composed in place (`JournalLineWriter`): numbers as `String(_:)` spells them,
/// and never a byte past the room.
@Suite(.tags(.addressSanitized)) struct JournalLineWriterTests {
    static func written(_ body: (inout JournalLineWriter) -> Void, room: Int = 64) -> (String, Bool) {
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: room) { buffer in
            var line = JournalLineWriter(buffer)
            body(&line)
            return (String(decoding: line.written, as: UTF8.self), line.overflowed)
        }
    }

    @Test func decimalsAreSpelledAsStringSpellsThem() {
        var values = [0, 1, 9, 10, 11, 99, 100, 101, 999, 1_000, 12_345, Int.max, Int.max - 1]
        var power = 1
        for _ in 0..<18 {
            power *= 10
            values += [power - 1, power, power + 1]
        }
        for value in values {
            #expect(Self.written { $0.writeDecimal(value) }.0 == String(value))
        }
        #expect(Self.written { $0.writeDecimal(-5) }.0 == "0")
    }

    @Test func aPieceThatDoesNotFitIsNotWritten() {
        let (text, overflowed) = Self.written(
            {
                $0.write("CLEAN ")
                $0.writeDecimal(123_456)
            }, room: 8)
        #expect(text == "CLEAN ")
        #expect(overflowed)
        #expect(Self.written { $0.writeHex(0x0123_abcd) } == ("0123abcd", false))
    }
}
