import Foundation

/// Any JSON value, read and written through the generic paths of `Codable`: the coders' tests
/// and the JSON fuzzer compare documents as values of it. An object remembers whether its text
/// had a member name twice (which of the two a decoder reads is unspecified, so such values are
/// not compared across decoders); equality ignores that.
public indirect enum AnyJSON: Codable, Equatable, Sendable {
    case null
    case bool(Bool)
    case number(Double)
    case string(String)
    case array([AnyJSON])
    case object([String: AnyJSON], hadDuplicateNames: Bool = false)

    /// A member name.
    public struct Name: CodingKey {
        public var stringValue: String
        public var intValue: Int? { nil }
        public init(stringValue: String) { self.stringValue = stringValue }
        public init?(intValue: Int) { nil }
    }

    public init(from decoder: any Decoder) throws {
        if let container = try? decoder.container(keyedBy: Name.self) {
            var members: [String: AnyJSON] = [:]
            let names = container.allKeys
            for name in names { members[name.stringValue] = try container.decode(AnyJSON.self, forKey: name) }
            self = .object(members, hadDuplicateNames: members.count != names.count)
        } else if var container = try? decoder.unkeyedContainer() {
            var elements: [AnyJSON] = []
            while !container.isAtEnd { elements.append(try container.decode(AnyJSON.self)) }
            self = .array(elements)
        } else {
            let container = try decoder.singleValueContainer()
            if container.decodeNil() {
                self = .null
            } else if let bool = try? container.decode(Bool.self) {
                self = .bool(bool)
            } else if let number = try? container.decode(Double.self) {
                self = .number(number)
            } else {
                self = .string(try container.decode(String.self))
            }
        }
    }

    public func encode(to encoder: any Encoder) throws {
        switch self {
        case .null:
            var container = encoder.singleValueContainer()
            try container.encodeNil()
        case .bool(let value):
            var container = encoder.singleValueContainer()
            try container.encode(value)
        case .number(let value):
            var container = encoder.singleValueContainer()
            try container.encode(value)
        case .string(let value):
            var container = encoder.singleValueContainer()
            try container.encode(value)
        case .array(let values):
            var container = encoder.unkeyedContainer()
            for value in values { try container.encode(value) }
        case .object(let members, _):
            var container = encoder.container(keyedBy: Name.self)
            for (name, value) in members { try container.encode(value, forKey: Name(stringValue: name)) }
        }
    }

    /// Whether an object in this value had a member name twice.
    public var hasDuplicateNames: Bool {
        switch self {
        case .object(let members, let duplicates): duplicates || members.values.contains { $0.hasDuplicateNames }
        case .array(let values): values.contains { $0.hasDuplicateNames }
        default: false
        }
    }

    public static func == (lhs: AnyJSON, rhs: AnyJSON) -> Bool {
        switch (lhs, rhs) {
        case (.null, .null): true
        case (.bool(let a), .bool(let b)): a == b
        case (.number(let a), .number(let b)): a == b
        case (.string(let a), .string(let b)): a == b
        case (.array(let a), .array(let b)): a == b
        case (.object(let a, _), .object(let b, _)): a == b
        default: false
        }
    }
}
