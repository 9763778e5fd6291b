import Foundation

// Value types for the coders' tests: every shape Codable and Foundation's JSON coders treat
// specially, each Equatable so a round trip is compared value for value.

struct Author: Codable, Equatable, Hashable {
    var name: String
    var email: String?
}

/// The note a cache holds, with every leaf type Foundation special-cases.
struct RichNote: Codable, Equatable {
    var id: UUID
    var title: String
    var body: String
    var tags: [String]
    var created: Date
    var edited: Date?
    var isPinned: Bool
    var rating: Double
    var ratio: Float
    var views: Int
    var smallCount: UInt8
    var bigCount: UInt64
    var thumbnail: Data
    var link: URL
    var price: Decimal
    var author: Author
    var coAuthors: [Author]
    var counts: [String: Int]
    var byPage: [Int: String]
    var byScore: [Double: String]
    var matrix: [[Int]]
    var maybe: [Int?]

    static func sample(_ seed: Int = 0) -> RichNote {
        RichNote(
            id: UUID(uuidString: "E621E1F8-C36C-495A-93FC-0C247A3E6E5F") ?? UUID(),
            title: "Note \(seed): \"quoted\" / slashed \\ back",
            body: "Line one\nline two\ttabbed — ünïcödé 日本語 🎉 \u{0001} \u{2028}",
            tags: ["swift", "cache", "json-\(seed)"],
            created: Date(timeIntervalSince1970: 1_700_000_000.25 + Double(seed)),
            edited: seed.isMultiple(of: 2) ? nil : Date(timeIntervalSinceReferenceDate: 12_345),
            isPinned: seed.isMultiple(of: 3), rating: 4.75, ratio: 0.1, views: -42 * seed,
            smallCount: 255, bigCount: .max,
            thumbnail: Data((0..<40).map { UInt8(($0 * 7 + seed) & 0xFF) }),
            link: URL(string: "https://example.com/notes/\(seed)?q=a%20b&x=1#frag") ?? URL(fileURLWithPath: "/"),
            price: Decimal(string: "1234.5678") ?? 0,
            author: Author(name: "Ada", email: nil),
            coAuthors: [Author(name: "Grace", email: "grace@example.com")],
            counts: ["a": 1, "snake_case_key": 2, "CamelKey": 3],
            byPage: [1: "one", -2: "minus two"], byScore: [0.5: "half", 2: "two"],
            matrix: [[1, 2], [], [3]], maybe: [1, nil, 3])
    }
}

/// Integers and floating-point numbers at their limits.
struct Limits: Codable, Equatable {
    var intMin = Int.min
    var intMax = Int.max
    var int8Min = Int8.min
    var int16Max = Int16.max
    var int32Min = Int32.min
    var uint64Max = UInt64.max
    var uint32Max = UInt32.max
    var zero = 0.0
    var negativeZero = -0.0
    var tiny = Double.leastNonzeroMagnitude
    var huge = Double.greatestFiniteMagnitude
    var third = 1.0 / 3.0
    var sum = 0.1 + 0.2
    var large = 1e20
    var small = 1.5e-7
    var floatMax = Float.greatestFiniteMagnitude
    var floatTiny = Float.leastNonzeroMagnitude
    var float = Float(3.14159)
}

/// An enum with associated values: Swift's synthesized conformance uses nested containers.
enum Shape: Codable, Equatable {
    case circle(radius: Double)
    case rectangle(width: Double, height: Double)
    case named(String, tags: [String])
    case empty
}

/// A tree as deep as asked: nesting through the generic path.
indirect enum Tree: Codable, Equatable {
    case leaf(Int)
    case node([Tree])

    static func deep(_ depth: Int) -> Tree {
        (0..<depth).reduce(Tree.leaf(7)) { inner, _ in .node([inner, .leaf(1)]) }
    }
}

/// A superclass and a subclass encoding into one object and into `superEncoder()`.
class Animal: Codable, Equatable {
    var name: String
    init(name: String) { self.name = name }
    static func == (lhs: Animal, rhs: Animal) -> Bool { lhs.name == rhs.name && type(of: lhs) == type(of: rhs) }
}

final class Dog: Animal {
    var breed: String
    init(name: String, breed: String) {
        self.breed = breed
        super.init(name: name)
    }
    enum CodingKeys: String, CodingKey { case breed }
    required init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        breed = try container.decode(String.self, forKey: .breed)
        try super.init(from: container.superDecoder())
    }
    override func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        // The superclass writes after the subclass goes on: `superEncoder` is written out of order.
        let superEncoder = container.superEncoder()
        try container.encode(breed, forKey: .breed)
        try super.encode(to: superEncoder)
    }
    static func == (lhs: Dog, rhs: Dog) -> Bool { lhs.name == rhs.name && lhs.breed == rhs.breed }
}

/// `nil` written explicitly beside `nil` left out.
struct Nullables: Codable, Equatable {
    var absent: Int?
    var explicitNull: String?
    var present: Int?
    enum CodingKeys: String, CodingKey { case absent, explicitNull, present }
    init(absent: Int?, explicitNull: String?, present: Int?) {
        self.absent = absent
        self.explicitNull = explicitNull
        self.present = present
    }
    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        absent = try container.decodeIfPresent(Int.self, forKey: .absent)
        explicitNull = try container.decodeIfPresent(String.self, forKey: .explicitNull)
        present = try container.decodeIfPresent(Int.self, forKey: .present)
    }
    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encodeIfPresent(absent, forKey: .absent)
        try container.encode(explicitNull, forKey: .explicitNull)
        try container.encodeIfPresent(present, forKey: .present)
    }
}

/// A value written through a nested keyed container that its parent writes around.
struct Interleaved: Codable, Equatable {
    var first: Int
    var inner: String
    var last: Int
    enum CodingKeys: String, CodingKey { case first, nested, last }
    enum NestedKeys: String, CodingKey { case inner }
    init(first: Int, inner: String, last: Int) {
        self.first = first
        self.inner = inner
        self.last = last
    }
    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        first = try container.decode(Int.self, forKey: .first)
        inner = try container.nestedContainer(keyedBy: NestedKeys.self, forKey: .nested).decode(
            String.self, forKey: .inner)
        last = try container.decode(Int.self, forKey: .last)
    }
    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(first, forKey: .first)
        var nested = container.nestedContainer(keyedBy: NestedKeys.self, forKey: .nested)
        try container.encode(last, forKey: .last)
        try nested.encode(inner, forKey: .inner)  // after its parent went on
    }
}

/// Keys whose snake-case forms test the conversion both ways (names that break the
/// conventions on purpose).
// swift-format-ignore: AlwaysUseLowerCamelCase
struct CasedKeys: Codable, Equatable {
    var myURLValue = 1
    var simple = 2
    var aB = 3
    var already_snake = 4
    var userID = 5
    var HTTPServer = 6
    var html = 7
}
