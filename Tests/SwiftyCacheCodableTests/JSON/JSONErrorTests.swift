import Foundation
import SwiftyCacheCodable
import Testing

/// Errors are Foundation's: the same `DecodingError` and `EncodingError` cases, with the same
/// coding paths, so code that reports or matches them works with either coder.
@Suite struct JSONErrorTests {
    /// The case and the coding path of a decoding error, as text.
    static func summary(_ error: any Error) -> String {
        guard let error = error as? DecodingError else { return "not a DecodingError: \(error)" }
        let (kind, context): (String, DecodingError.Context) =
            switch error {
            case .keyNotFound(let key, let context): ("keyNotFound(\(key.stringValue))", context)
            case .typeMismatch(_, let context): ("typeMismatch", context)
            case .valueNotFound(_, let context): ("valueNotFound", context)
            case .dataCorrupted(let context): ("dataCorrupted", context)
            @unknown default: ("unknown", DecodingError.Context(codingPath: [], debugDescription: ""))
            }
        return kind + " at " + context.codingPath.map(\.stringValue).joined(separator: "/")
    }

    static let documents: [String] = [
        #"{"name":"a"}"#,  // a required key is missing
        #"{"name":5,"email":null}"#,  // a string expected, a number found
        #"{"name":null}"#,  // a string expected, null found
        #"[{"name":"a"},{"name":"b","email":7}]"#,  // deep in an array
        #"{"name":"a","email":"e","extra":{"nested":[1,2,{}]}}"#,  // unknown members are ignored
    ]

    @Test(arguments: documents)
    func decodingErrorsMatchFoundation(_ document: String) throws {
        let data = Data(document.utf8)
        let foundation: String
        let ours: String
        if document.hasPrefix("[") {
            foundation = Self.outcome { try JSONDecoder().decode([Author].self, from: data) }
            ours = Self.outcome { try DirectJSONDecoder().decode([Author].self, from: data) }
        } else {
            foundation = Self.outcome { try JSONDecoder().decode(StrictAuthor.self, from: data) }
            ours = Self.outcome { try DirectJSONDecoder().decode(StrictAuthor.self, from: data) }
        }
        #expect(ours == foundation)
    }

    static func outcome<T>(_ body: () throws -> T) -> String {
        do {
            return "value \(try body())"
        } catch {
            return summary(error)
        }
    }

    @Test func numbersOutOfRangeAreDataCorrupted() throws {
        let cases: [(String, (Data) throws -> Any)] = [
            ("[300]", { try DirectJSONDecoder().decode([UInt8].self, from: $0) }),
            ("[-1]", { try DirectJSONDecoder().decode([UInt].self, from: $0) }),
            ("[1.5]", { try DirectJSONDecoder().decode([Int].self, from: $0) }),
            ("[123456789012345678901234567890]", { try DirectJSONDecoder().decode([Int64].self, from: $0) }),
            ("[1e400]", { try DirectJSONDecoder().decode([Double].self, from: $0) }),
            ("[1e39]", { try DirectJSONDecoder().decode([Float].self, from: $0) }),
        ]
        for (text, decode) in cases {
            let error = #expect(throws: DecodingError.self, "\(text)") { try decode(Data(text.utf8)) }
            #expect(error.map(Self.summary) == "dataCorrupted at Index 0", "\(text)")
        }
        #expect(try DirectJSONDecoder().decode([Int].self, from: Data("[1e2, -0, 2.0]".utf8)) == [100, 0, 2])
        #expect(
            try DirectJSONDecoder().decode([Double].self, from: Data("[123456789012345678901234567890]".utf8)) == [
                1.2345678901234568e29
            ])
    }

    @Test func encodingErrorsCarryTheCodingPath() throws {
        struct Holder: Encodable {
            var values: [Double]
        }
        let error = #expect(throws: EncodingError.self) { try DirectJSONEncoder().encode(Holder(values: [1, .nan])) }
        guard case .invalidValue(_, let context) = error else {
            Issue.record("expected invalidValue, got \(String(describing: error))")
            return
        }
        #expect(context.codingPath.map(\.stringValue) == ["values", "Index 1"])
    }

    @Test func aTopLevelValueThatEncodesNothingIsAnError() throws {
        struct Silent: Encodable {
            func encode(to encoder: any Encoder) throws {}
        }
        #expect(throws: EncodingError.self) { try DirectJSONEncoder().encode(Silent()) }
        #expect(throws: EncodingError.self) { try JSONEncoder().encode(Silent()) }
        // Nested, it is an empty object, as Foundation writes it.
        #expect(try DirectJSONEncoder().encode([Silent()]) == Data("[{}]".utf8))
    }

    @Test func aSecondValueInASingleValueContainerIsAnError() throws {
        struct Twice: Encodable {
            func encode(to encoder: any Encoder) throws {
                var container = encoder.singleValueContainer()
                try container.encode(1)
                try container.encode(2)
            }
        }
        #expect(throws: EncodingError.self) { try DirectJSONEncoder().encode(Twice()) }
    }
}

/// An author whose name is required and must be a string.
struct StrictAuthor: Codable, Equatable {
    var name: String
    var email: String
}
