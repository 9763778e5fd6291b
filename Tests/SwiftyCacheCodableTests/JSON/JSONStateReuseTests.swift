import Foundation
import SwiftyCacheTestSupport
import Testing

@testable import SwiftyCacheCodable

/// A cache's format keeps one encoding state between encodes (`JSONEncodingStateSlot`): what
/// one encode leaves in it never reaches the next one's text.
@Suite(.tags(.concurrency, .addressSanitized)) struct JSONStateReuseTests {
    struct Note: Codable, Equatable, Sendable {
        var id: Int
        var title: String
        var tags: [String]
    }

    /// Keeps the encoder a value's `encode(to:)` was handed, as no value should.
    final class KeptEncoder: @unchecked Sendable {
        // @unchecked Sendable is sound: the tests use it on one thread.
        var encoder: (any Encoder)?
    }

    /// A value that keeps its encoder, to write with it after its encode returned.
    struct Keeper: Encodable {
        let box: KeptEncoder
        func encode(to encoder: any Encoder) throws {
            box.encoder = encoder
            var container = encoder.singleValueContainer()
            try container.encode("kept")
        }
    }

    /// A value whose encode fails halfway, inside a nested value.
    struct Failing: Encodable {
        enum CodingKeys: String, CodingKey { case a, b }
        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode("written", forKey: .a)
            try container.encode([Double.infinity], forKey: .b)
        }
    }

    static func text(_ value: some Encodable, _ options: DirectJSONEncoder.Options, _ slot: JSONEncodingStateSlot)
        throws -> String
    {
        var bytes = Array("prefix:".utf8)
        try DirectJSONEncoder.encode(value, appendingTo: &bytes, options: options, reusing: slot)
        return String(decoding: bytes, as: UTF8.self)
    }

    @Test func aReusedStateWritesEachValueAlone() throws {
        let options = DirectJSONEncoder.Options(DirectJSONEncoder())
        let slot = JSONEncodingStateSlot()
        #expect(slot.spareCapacity() == nil)
        for id in 0..<50 {
            let note = Note(id: id, title: "Note \(id)", tags: Array(repeating: "t", count: id % 4))
            let text = try Self.text(note, options, slot)
            let tags = note.tags.map { "\"\($0)\"" }.joined(separator: ",")
            #expect(text == "prefix:{\"id\":\(id),\"title\":\"Note \(id)\",\"tags\":[\(tags)]}")
        }
        // The state went back after each encode.
        #expect(slot.spareCapacity() != nil)
    }

    @Test func anEncodeThatFailedLeavesNothingForTheNext() throws {
        let options = DirectJSONEncoder.Options(DirectJSONEncoder())
        let slot = JSONEncodingStateSlot()
        var bytes = Array("prefix:".utf8)
        #expect(throws: EncodingError.self) {
            try DirectJSONEncoder.encode(Failing(), appendingTo: &bytes, options: options, reusing: slot)
        }
        #expect(bytes == Array("prefix:".utf8))
        let note = Note(id: 1, title: "a", tags: [])
        #expect(try Self.text(note, options, slot) == #"prefix:{"id":1,"title":"a","tags":[]}"#)
    }

    @Test func aStateAValueKeptIsNeverReused() throws {
        let options = DirectJSONEncoder.Options(DirectJSONEncoder())
        let slot = JSONEncodingStateSlot()
        let kept = KeptEncoder()
        #expect(try Self.text(Keeper(box: kept), options, slot) == #"prefix:"kept""#)
        // The kept encoder's state did not go back to the slot.
        #expect(slot.spareCapacity() == nil)
        let first = try Self.text(Note(id: 1, title: "a", tags: []), options, slot)
        // Writing with the kept encoder now fails or goes nowhere; it never reaches the next text.
        var container = try #require(kept.encoder).singleValueContainer()
        try? container.encode("late")
        let second = try Self.text(Note(id: 2, title: "b", tags: ["x"]), options, slot)
        #expect(first == #"prefix:{"id":1,"title":"a","tags":[]}"#)
        #expect(second == #"prefix:{"id":2,"title":"b","tags":["x"]}"#)
    }

    @Test func aLargeBufferIsNotKept() throws {
        let options = DirectJSONEncoder.Options(DirectJSONEncoder())
        let slot = JSONEncodingStateSlot()
        let large = Note(id: 1, title: String(repeating: "x", count: 2 * JSONEncodingStateSlot.keptCapacity), tags: [])
        _ = try Self.text(large, options, slot)
        #expect(slot.spareCapacity() == nil)
        _ = try Self.text(Note(id: 2, title: "b", tags: []), options, slot)
        let kept = try #require(slot.spareCapacity())
        #expect(kept <= JSONEncodingStateSlot.keptCapacity)
    }

    @Test func threadsSharingASlotEachGetTheirOwnText() async throws {
        let format = ObjectCacheFormat.json
        let failures = await withTaskGroup(of: Int.self) { group in
            for task in 0..<8 {
                group.addTask {
                    var failures = 0
                    for id in 0..<300 {
                        let note = Note(id: task * 1_000 + id, title: "T\(task)", tags: ["\(id)"])
                        var bytes: [UInt8] = []
                        let decoded = try? { () throws -> Note in
                            try format.encode(note, appendingTo: &bytes)
                            return try JSONDecoder().decode(Note.self, from: Data(bytes))
                        }()
                        if decoded != note { failures += 1 }
                    }
                    return failures
                }
            }
            return await group.reduce(0, +)
        }
        #expect(failures == 0)
    }
}
