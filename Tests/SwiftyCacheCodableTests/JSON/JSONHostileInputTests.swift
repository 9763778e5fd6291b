import Foundation
import SwiftyCacheCodable
import SwiftyCacheTestSupport
import Testing

/// Bytes no encoder wrote: the decoder throws a `DecodingError` for each, never traps, never
/// recurses without bound, and its table stays a small multiple of the input.
@Suite struct JSONHostileInputTests {
    static let malformed: [[UInt8]] = [
        [],
        Array("   ".utf8),
        Array("{".utf8),
        Array("{\"a\" 1}".utf8),
        Array("{1:2}".utf8),
        Array("[01]".utf8),
        Array("[-]".utf8),
        Array("[1.]".utf8),
        Array("[1e]".utf8),
        Array("[.5]".utf8),
        Array("[+1]".utf8),
        Array("[NaN]".utf8),
        Array("[tru]".utf8),
        Array("[nul]".utf8),
        Array("\"abc".utf8),
        Array("\"\\x\"".utf8),
        Array("\"\\u12\"".utf8),
        Array("\"\\uZZZZ\"".utf8),
        Array("\"\\uD800\"".utf8),  // a lone high surrogate
        Array("\"\\uDC00\"".utf8),  // a lone low surrogate
        Array("\"\\uD800\\u0041\"".utf8),
        [0x22, 0x01, 0x22],  // an unescaped control character
        [0x22, 0xC3, 0x28, 0x22],  // a lead byte without its continuation
        [0x22, 0xC0, 0x80, 0x22],  // an overlong NUL
        [0x22, 0xED, 0xA0, 0x80, 0x22],  // a surrogate in UTF-8
        [0x22, 0xF4, 0x90, 0x80, 0x80, 0x22],  // past U+10FFFF
        [0x22, 0xFF, 0x22],
        [0x5B, 0xE2, 0x82, 0x5D],  // a truncated sequence outside a string
        Array("{\"\\uD800k\":1}".utf8),  // a lone surrogate in a key (found by json-fuzzer)
        Array("[1] [2]".utf8),
        Array("[1]x".utf8),
    ]

    /// Trailing commas, which Foundation's decoder lets pass and no encoder writes.
    static let trailingCommas: [[UInt8]] = [Array("[1,]".utf8), Array("{\"a\":1,}".utf8)]

    @Test func trailingCommasThrow() {
        for bytes in Self.trailingCommas {
            #expect(throws: DecodingError.self) { try DirectJSONDecoder().decode(AnyJSON.self, from: Data(bytes)) }
        }
    }

    @Test func malformedTextThrows() {
        for bytes in Self.malformed {
            #expect(throws: DecodingError.self, "\(bytes)") {
                try DirectJSONDecoder().decode(AnyJSON.self, from: Data(bytes))
            }
            #expect(throws: (any Error).self, "Foundation refuses it too: \(bytes)") {
                try JSONDecoder().decode(AnyJSON.self, from: Data(bytes))
            }
        }
    }

    /// Found by `json-fuzzer`: a number whose digits are not zero but that underflows to zero is
    /// refused, as Foundation refuses it, for every floating-point and integer type.
    @Test func underflowIsRefusedLikeOverflow() throws {
        for text in ["[1e-400]", "[11e-4007]", "[-2e-324]"] {
            #expect(throws: DecodingError.self) { try DirectJSONDecoder().decode([Double].self, from: Data(text.utf8)) }
            #expect(throws: DecodingError.self) { try DirectJSONDecoder().decode([Int].self, from: Data(text.utf8)) }
            #expect(throws: (any Error).self) { try JSONDecoder().decode([Double].self, from: Data(text.utf8)) }
        }
        for text in ["[1e-50]", "[3.5e38]", "[3.4028236e38]"] {
            #expect(throws: DecodingError.self) { try DirectJSONDecoder().decode([Float].self, from: Data(text.utf8)) }
            #expect(throws: (any Error).self) { try JSONDecoder().decode([Float].self, from: Data(text.utf8)) }
        }
        #expect(
            try DirectJSONDecoder().decode([Double].self, from: Data("[0e-400, 1e-300, -0.0e5]".utf8)) == [
                0, 1e-300, 0,
            ])
    }

    /// Found by `json-fuzzer`: `0e4` is a number (RFC 8259) that Foundation's decoder refuses
    /// (though it reads `-0e4` and `0e+4`); no encoder writes it, and this decoder reads it.
    @Test func aZeroWithAnExponentIsANumber() throws {
        #expect(try DirectJSONDecoder().decode([Double].self, from: Data("[0e4,0E1,-0e1,0e+1]".utf8)) == [0, 0, 0, 0])
    }

    @Test func validSurrogatePairsAndEscapesDecode() throws {
        let text = #"["\ud83d\ude00","\"\\\/\b\f\n\r\t","\u00e9"]"#
        #expect(
            try DirectJSONDecoder().decode([String].self, from: Data(text.utf8)) == ["😀", "\"\\/\u{8}\u{c}\n\r\t", "é"])
    }

    @Test func deepNestingIsRefusedWithoutRecursing() throws {
        for depth in [513, 100_000] {
            let text = String(repeating: "[", count: depth) + String(repeating: "]", count: depth)
            let error = #expect(throws: DecodingError.self) {
                try DirectJSONDecoder().decode(AnyJSON.self, from: Data(text.utf8))
            }
            #expect(error.map(JSONErrorTests.summary) == "dataCorrupted at ")
        }
        let allowed = String(repeating: "[", count: 512) + String(repeating: "]", count: 512)
        #expect(throws: Never.self) { try DirectJSONDecoder().decode(AnyJSON.self, from: Data(allowed.utf8)) }
    }

    @Test func everyTruncationOfAValidDocumentThrows() throws {
        let document = try DirectJSONEncoder().encode(RichNote.sample(3))
        for length in 0..<document.count {
            #expect(throws: DecodingError.self, "\(length) bytes") {
                try DirectJSONDecoder().decode(RichNote.self, from: document.prefix(length))
            }
        }
        #expect(try DirectJSONDecoder().decode(RichNote.self, from: document) == RichNote.sample(3))
    }

    @Test func duplicateKeysDecodeOneOfTheirValues() throws {
        let value = try DirectJSONDecoder().decode(Author.self, from: Data(#"{"name":"a","name":"b"}"#.utf8))
        #expect(["a", "b"].contains(value.name))
        // Past the walking limit the lookup is by hash: still one of them, the first.
        var members = (0..<40).map { "\"k\($0)\":\($0)" }
        members.append(#""k3":99"#)
        let large = try DirectJSONDecoder().decode(
            [String: Int].self, from: Data(("{" + members.joined(separator: ",") + "}").utf8))
        #expect(large.count == 40)
    }

    @Test func theTableIsASmallMultipleOfTheInput() throws {
        // The densest text: a token every two bytes.
        let text = Data(("[" + Array(repeating: "0", count: 500_000).joined(separator: ",") + "]").utf8)
        let tableBytes = try DirectJSONDecoder.tableByteCount(for: text)
        #expect(tableBytes <= 12 * text.count + 4096, "12 bytes an input byte, and the allocator's rounding")
        #expect(try DirectJSONDecoder().decode([Int].self, from: text).count == 500_000)
    }

    @Test func manyMembersAreLookedUpByHash() throws {
        // 20,000 members read by a dictionary: each lookup O(1), not a walk of all of them.
        let pairs = (0..<20_000).map { "\"key\($0)\":\($0)" }.joined(separator: ",")
        let dictionary = try DirectJSONDecoder().decode([String: Int].self, from: Data(("{" + pairs + "}").utf8))
        #expect(dictionary.count == 20_000 && dictionary["key19999"] == 19_999)
    }
}
