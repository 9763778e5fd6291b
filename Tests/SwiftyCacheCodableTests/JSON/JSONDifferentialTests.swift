import Foundation
import SwiftyCacheCodable
import Testing

/// The built-in coders against Foundation's, both ways: what `DirectJSONEncoder` writes,
/// `JSONDecoder` reads to an equal value, and what `JSONEncoder` writes, `DirectJSONDecoder`
/// reads to an equal value, under every strategy.
@Suite struct JSONDifferentialTests {
    /// A configuration applied to both pairs of coders.
    struct Configuration: CustomStringConvertible, Sendable {
        let description: String
        let apply: @Sendable (JSONEncoder, JSONDecoder) -> Void
    }

    static let configurations: [Configuration] = [
        Configuration(description: "defaults") { _, _ in },
        Configuration(description: "sorted, pretty, unescaped slashes") { encoder, _ in
            encoder.outputFormatting = [.sortedKeys, .prettyPrinted, .withoutEscapingSlashes]
        },
        Configuration(description: "dates in seconds, data deferred") { encoder, decoder in
            encoder.dateEncodingStrategy = .secondsSince1970
            decoder.dateDecodingStrategy = .secondsSince1970
            encoder.dataEncodingStrategy = .deferredToData
            decoder.dataDecodingStrategy = .deferredToData
        },
        Configuration(description: "dates in milliseconds, snake case") { encoder, decoder in
            encoder.dateEncodingStrategy = .millisecondsSince1970
            decoder.dateDecodingStrategy = .millisecondsSince1970
            encoder.keyEncodingStrategy = .convertToSnakeCase
            decoder.keyDecodingStrategy = .convertFromSnakeCase
        },
        Configuration(description: "custom dates, data and keys") { encoder, decoder in
            encoder.dateEncodingStrategy = .custom { date, encoder in
                var container = encoder.singleValueContainer()
                try container.encode("at:\(date.timeIntervalSince1970)")
            }
            decoder.dateDecodingStrategy = .custom { decoder in
                let text = try decoder.singleValueContainer().decode(String.self)
                return Date(timeIntervalSince1970: Double(text.dropFirst(3)) ?? 0)
            }
            encoder.dataEncodingStrategy = .custom { data, encoder in
                var container = encoder.unkeyedContainer()
                try container.encode(data.count)
                try container.encode(data.base64EncodedString())
            }
            decoder.dataDecodingStrategy = .custom { decoder in
                var container = try decoder.unkeyedContainer()
                _ = try container.decode(Int.self)
                return Data(base64Encoded: try container.decode(String.self)) ?? Data()
            }
            encoder.keyEncodingStrategy = .custom { path in
                JSONTestKey(stringValue: "k_" + (path.last?.stringValue ?? ""))
            }
            decoder.keyDecodingStrategy = .custom { path in
                JSONTestKey(stringValue: String((path.last?.stringValue ?? "").dropFirst(2)))
            }
        },
    ]

    static let iso8601: Configuration = Configuration(description: "ISO 8601 dates") { encoder, decoder in
        encoder.dateEncodingStrategy = .iso8601
        decoder.dateDecodingStrategy = .iso8601
    }

    /// Checks `value` both ways under `configuration`.
    static func check<T: Codable & Equatable>(_ value: T, _ configuration: Configuration) throws {
        let (foundationEncoder, foundationDecoder) = (JSONEncoder(), JSONDecoder())
        configuration.apply(foundationEncoder, foundationDecoder)
        let encoder = DirectJSONEncoder(matching: foundationEncoder)
        let decoder = DirectJSONDecoder(matching: foundationDecoder)

        let ours = try encoder.encode(value)
        #expect(try foundationDecoder.decode(T.self, from: ours) == value, "\(String(decoding: ours, as: UTF8.self))")
        let theirs = try foundationEncoder.encode(value)
        #expect(try decoder.decode(T.self, from: theirs) == value, "\(String(decoding: theirs, as: UTF8.self))")
        #expect(try decoder.decode(T.self, from: ours) == value)
    }

    @Test(arguments: configurations)
    func richNotes(_ configuration: Configuration) throws {
        for seed in 0..<4 { try Self.check(RichNote.sample(seed), configuration) }
    }

    @Test(arguments: configurations)
    func limitsShapesAndClasses(_ configuration: Configuration) throws {
        try Self.check(Limits(), configuration)
        try Self.check(
            [Shape.circle(radius: 2), .rectangle(width: 1, height: 0.5), .named("x", tags: ["a"]), .empty],
            configuration)
        try Self.check(Dog(name: "Rex", breed: "Collie"), configuration)
        try Self.check(Nullables(absent: nil, explicitNull: nil, present: 3), configuration)
        try Self.check(Interleaved(first: 1, inner: "in", last: 9), configuration)
        // Three levels of JSON a level of tree: 150 stay under the 512 both decoders allow.
        try Self.check(Tree.deep(150), configuration)
    }

    @Test func iso8601DatesWholeSeconds() throws {
        let dates = [Date(timeIntervalSince1970: 1_700_000_000), Date(timeIntervalSince1970: 0)]
        try Self.check(dates, Self.iso8601)
    }

    @Test func topLevelFragmentsAndCollections() throws {
        let defaults = Self.configurations[0]
        try Self.check("just a string", defaults)
        try Self.check(-17, defaults)
        try Self.check(2.5, defaults)
        try Self.check(true, defaults)
        try Self.check([String: [Int]](), defaults)
        try Self.check([Author(name: "k", email: nil): 1], defaults)
        try Self.check(Set(["a", "b"]), defaults)
        try Self.check([Int?](arrayLiteral: nil, 1), defaults)
    }

    @Test func nonConformingFloatsAsStrings() throws {
        let configuration = Configuration(description: "non-conforming as strings") { encoder, decoder in
            encoder.nonConformingFloatEncodingStrategy = .convertToString(
                positiveInfinity: "+inf", negativeInfinity: "-inf", nan: "nan")
            decoder.nonConformingFloatDecodingStrategy = .convertFromString(
                positiveInfinity: "+inf", negativeInfinity: "-inf", nan: "nan")
        }
        try Self.check([Double.infinity, -Double.infinity, 1], configuration)
        let nan = try DirectJSONDecoder(
            matching: {
                let decoder = JSONDecoder()
                configuration.apply(JSONEncoder(), decoder)
                return decoder
            }()
        ).decode([Float].self, from: Data(#"["nan"]"#.utf8))
        #expect(nan.count == 1 && nan[0].isNaN)
        #expect(throws: EncodingError.self) { try DirectJSONEncoder().encode([Double.nan]) }
    }

    /// Snake case is not a round trip for every name (`myURLValue` comes back `myUrlValue`, in
    /// Foundation too), so each direction is compared with Foundation's on its own.
    @Test func snakeCaseConvertsNamesAsFoundationDoes() throws {
        let foundation = JSONEncoder()
        foundation.outputFormatting = [.sortedKeys]
        foundation.keyEncodingStrategy = .convertToSnakeCase
        var ours = DirectJSONEncoder(matching: foundation)
        ours.outputFormatting = [.sortedKeys]
        let expected = String(decoding: try foundation.encode(CasedKeys()), as: UTF8.self)
        #expect(String(decoding: try ours.encode(CasedKeys()), as: UTF8.self) == expected)

        let snake = Data(
            #"{"my_url_value":1,"simple":2,"a_b":3,"__lead_trail__":4,"user_id":5,"x":6,"dict":{"a_b":1}}"#.utf8)
        let foundationDecoder = JSONDecoder()
        foundationDecoder.keyDecodingStrategy = .convertFromSnakeCase
        let decoder = DirectJSONDecoder(matching: foundationDecoder)
        let theirs = try foundationDecoder.decode([String: AnyScalar].self, from: snake)
        #expect(try decoder.decode([String: AnyScalar].self, from: snake) == theirs)
        let camel = try decoder.decode(CamelKeys.self, from: snake)
        #expect(camel == (try foundationDecoder.decode(CamelKeys.self, from: snake)))
        #expect(camel.dict == ["a_b": 1], "a dictionary's own keys are not converted")
    }

    @Test func sortedOutputMatchesFoundationByteForByte() throws {
        let foundation = JSONEncoder()
        foundation.outputFormatting = [.sortedKeys]
        var ours = DirectJSONEncoder()
        ours.outputFormatting = [.sortedKeys]
        for value in [RichNote.sample(1), RichNote.sample(2)] {
            let expected = try foundation.encode(value)
            let actual = try ours.encode(value)
            #expect(String(decoding: actual, as: UTF8.self) == String(decoding: expected, as: UTF8.self))
        }
        #expect(try ours.encode(Limits()) == foundation.encode(Limits()))
    }
}

/// A coding key a custom key strategy returns.
struct JSONTestKey: CodingKey {
    var stringValue: String
    var intValue: Int? { nil }
    init(stringValue: String) { self.stringValue = stringValue }
    init?(intValue: Int) { nil }
}

/// The members of a snake-case document, read with camel-case keys.
// swift-format-ignore: AlwaysUseLowerCamelCase
struct CamelKeys: Codable, Equatable {
    var myUrlValue: Int
    var simple: Int
    var aB: Int
    var __leadTrail__: Int
    var userId: Int
    var x: Int
    var dict: [String: Int]
}

/// A number or an object, for documents read as dictionaries.
enum AnyScalar: Codable, Equatable {
    case number(Int)
    case object([String: Int])

    init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if let number = try? container.decode(Int.self) {
            self = .number(number)
        } else {
            self = .object(try container.decode([String: Int].self))
        }
    }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        switch self {
        case .number(let number): try container.encode(number)
        case .object(let object): try container.encode(object)
        }
    }
}
