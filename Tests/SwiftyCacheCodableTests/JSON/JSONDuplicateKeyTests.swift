import Foundation
import SwiftyCacheCodable
import Testing

/// An object whose members share a name reads its first one, as Foundation's decoder does,
/// whatever order the members are asked for in.
@Suite struct JSONDuplicateKeyTests {
    struct Pair: Decodable, Equatable {
        var a: String
        var b: String
    }

    /// Asks for `b` before `a`, then for `a` again.
    struct OutOfOrder: Decodable, Equatable {
        var a: String
        var b: String
        var hadA: Bool

        enum CodingKeys: String, CodingKey { case a, b }

        init(a: String, b: String, hadA: Bool) {
            self.a = a
            self.b = b
            self.hadA = hadA
        }

        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            b = try container.decode(String.self, forKey: .b)
            a = try container.decode(String.self, forKey: .a)
            hadA = container.contains(.a)
        }
    }

    static func both<T: Decodable & Equatable>(_ type: T.Type, _ json: String) throws -> (direct: T, foundation: T) {
        let data = Data(json.utf8)
        return (try DirectJSONDecoder().decode(type, from: data), try JSONDecoder().decode(type, from: data))
    }

    @Test func aDictionaryKeepsTheFirstValue() throws {
        let (direct, foundation) = try Self.both([String: String].self, #"{"a":"b","a":"c"}"#)
        #expect(direct == ["a": "b"])
        #expect(direct == foundation)
    }

    @Test func aStructReadsTheFirstValueInOrderAndOutOfOrder() throws {
        let json = #"{"a":"1","b":"2","a":"3","b":"4"}"#
        let inOrder = try Self.both(Pair.self, json)
        #expect(inOrder.direct == Pair(a: "1", b: "2"))
        #expect(inOrder.direct == inOrder.foundation)
        let outOfOrder = try Self.both(OutOfOrder.self, json)
        #expect(outOfOrder.direct == OutOfOrder(a: "1", b: "2", hadA: true))
        #expect(outOfOrder.direct == outOfOrder.foundation)
    }

    @Test func anEscapedNameIsTheSameName() throws {
        let (direct, foundation) = try Self.both(Pair.self, #"{"b":"x","\u0061":"first","a":"second"}"#)
        #expect(direct == Pair(a: "first", b: "x"))
        #expect(direct == foundation)
    }

    @Test func aLargeObjectKeepsTheFirstValue() throws {
        let members = (0..<40).map { #""k\#($0)":\#($0)"# } + [#""k7":700"#, #""k39":3900"#]
        let (direct, foundation) = try Self.both([String: Int].self, "{" + members.joined(separator: ",") + "}")
        #expect(direct["k7"] == 7)
        #expect(direct["k39"] == 39)
        #expect(direct.count == 40)
        #expect(direct == foundation)
    }

    @Test func objectsWithoutDuplicatesReadEveryMemberWhateverTheOrder() throws {
        let (direct, foundation) = try Self.both(OutOfOrder.self, #"{"a":"1","b":"2"}"#)
        #expect(direct == OutOfOrder(a: "1", b: "2", hadA: true))
        #expect(direct == foundation)
    }
}
