import Foundation
import SwiftyCacheCodable
import SwiftyCacheCore
import Testing

@Suite struct XXHashKeyHasherTests {
    /// XXH64 with seeds 0 and 0x5357494654594341, from the reference implementation (Python's
    /// `xxhash` package), concatenated.
    @Test(arguments: [
        ("", "ef46db3751d8e999f71e42975e776255"),
        ("abc", "44bc2cf5ad770999dcfdb10098215858"),
        ("s:note-1", "7d192290c93a91b4bb88561f0c9ef894"),
    ])
    func referenceValues(message: String, name: String) {
        #expect(XXHashKeyHasher().engineKey(for: Data(message.utf8)) == name)
    }

    /// The digits written eight at a time match the digests printed in base 16, for digests
    /// with every nibble value in every position.
    @Test func theDigitsAreTheDigestsInHexadecimal() {
        func hex(_ value: UInt64) -> String {
            let digits = String(value, radix: 16)
            return String(repeating: "0", count: 16 - digits.count) + digits
        }
        var state: UInt64 = 0x9E37_79B9_7F4A_7C15
        for length in 0..<3_000 {
            let bytes = (0..<(length % 61)).map { _ in
                state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
                return UInt8(truncatingIfNeeded: state >> 56)
            }
            let expected = bytes.withUnsafeBytes {
                hex(XXHash64.hash($0, seed: 0)) + hex(XXHash64.hash($0, seed: 0x5357_4946_5459_4341))
            }
            #expect(XXHashKeyHasher().engineKey(for: Data(bytes)) == expected)
        }
    }

    @Test func namesAreValidEngineKeys() {
        for length in [0, 1, 31, 32, 33, 100, 1000] {
            let name = XXHashKeyHasher().engineKey(for: Data(repeating: 7, count: length))
            #expect(name.count == 32)
            #expect(name.utf8.allSatisfy { (48...57).contains($0) || (97...102).contains($0) })
        }
    }
}
