import Foundation
import SwiftyCacheCodable
import SwiftyCacheTestSupport
import Testing

/// How a `Double` is spelled: an integral value below 2⁵³ takes a path of its own (its
/// integer's digits); every value must still read as `description` less its ".0", which is
/// Foundation's spelling, and the boundaries of that path (2⁵³, −0, fractions) must not move.
@Suite struct JSONNumberSpellingTests {
    /// `value` as our encoder writes it, and as `description` spells it less a trailing ".0".
    static func spellings(_ value: Double) throws -> (ours: String, expected: String) {
        let ours = String(decoding: try DirectJSONEncoder().encode([value]), as: UTF8.self)
        var expected = value.description
        if expected.hasSuffix(".0") { expected.removeLast(2) }
        return (ours, "[\(expected)]")
    }

    @Test func integralDoublesAreSpelledAsDescriptionSpellsThemOnBothSidesOf2To53() throws {
        let limit = 9_007_199_254_740_992.0  // 2⁵³
        var values: [Double] = [
            0, 1, -1, 9, 10, 99, 100, 721_692_800, -721_692_800, limit - 1, -(limit - 1), limit, -limit,
            limit + 2, 1e16, 9.9e15, 1e22, 1e300, Double(Int64.max), Double(Int64.min),
        ]
        var power = 1.0
        for _ in 0..<60 {
            values += [power, -power, power - 1, power + 1]
            power *= 2
        }
        var ten = 1.0
        for _ in 0..<20 {
            values += [ten, -ten, ten - 1]
            ten *= 10
        }
        var generator = SplitMix(state: 0x0D0B_1E)
        for _ in 0..<5_000 {
            let bits = Int(generator.next() % 54)
            let magnitude = bits == 0 ? 0 : generator.next() >> (64 - UInt64(bits))
            values.append(generator.next() & 1 == 0 ? Double(magnitude) : -Double(magnitude))
        }
        for value in values {
            let (ours, expected) = try Self.spellings(value)
            #expect(ours == expected, "\(value)")
            #expect(try JSONDecoder().decode([Double].self, from: Data(ours.utf8)) == [value], "\(value)")
        }
    }

    @Test func negativeZeroAndFractionsKeepTheirSpelling() throws {
        for value in [-0.0, 0.5, -0.5, 1.5, 1e-7, 721_692_800.25, 0.1, 4_503_599_627_370_495.5] {
            let (ours, expected) = try Self.spellings(value)
            #expect(ours == expected, "\(value)")
        }
        #expect(try Self.spellings(-0.0).ours == "[-0]")
    }

    @Test func wholeSecondDatesMatchFoundationByteForByte() throws {
        let dates = [0, 1, -1, 1_700_000_000, -978_307_200, 4_102_444_800].map { Date(timeIntervalSince1970: $0) }
        for strategy in [JSONEncoder.DateEncodingStrategy.deferredToDate, .secondsSince1970, .millisecondsSince1970] {
            let foundation = JSONEncoder()
            foundation.dateEncodingStrategy = strategy
            let ours = try DirectJSONEncoder(matching: foundation).encode(dates)
            #expect(ours == (try foundation.encode(dates)), "\(String(decoding: ours, as: UTF8.self))")
        }
    }
}
