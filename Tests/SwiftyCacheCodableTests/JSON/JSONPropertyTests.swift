import Foundation
import SwiftyCacheCodable
import SwiftyCacheTestSupport
import Testing

/// Generated values, both ways against Foundation: random JSON documents of every shape, and
/// random notes with strings of any scalars and numbers of any magnitude. Seeded, so a failure
/// names the round that reproduces it.
@Suite struct JSONPropertyTests {
    @Test func generatedDocumentsRoundTripBothWays() throws {
        var generator = SplitMix(state: 0x5EED)
        for round in 0..<400 {
            let value = AnyJSON.generate(depth: 4, using: &generator)
            let ours = try DirectJSONEncoder().encode(value)
            #expect(try JSONDecoder().decode(AnyJSON.self, from: ours) == value, "round \(round)")
            let theirs = try JSONEncoder().encode(value)
            #expect(try DirectJSONDecoder().decode(AnyJSON.self, from: theirs) == value, "round \(round)")
        }
    }

    @Test func generatedStringsAreWrittenAsFoundationWritesThemAndReadBack() throws {
        // Runs of plain ASCII of every length before and after each special byte, so that the
        // eight-byte scans meet it at every offset of a word, and at the end of the input.
        var generator = SplitMix(state: 0x57A1)
        let specials: [String] = ["\"", "\\", "/", "\n", "\u{01}", "\u{1F}", "é", "漢", "😀", "\u{7F}"]
        for round in 0..<600 {
            var text = ""
            for _ in 0..<Int(generator.next() % 4) {
                text += String(repeating: "a", count: Int(generator.next() % 19))
                text += specials[Int(generator.next() % UInt64(specials.count))]
            }
            text += String(repeating: "z", count: Int(generator.next() % 11))
            let value = [text, String.generate(using: &generator)]
            let ours = try DirectJSONEncoder().encode(value)
            #expect(ours == (try JSONEncoder().encode(value)), "round \(round)")
            #expect(try DirectJSONDecoder().decode([String].self, from: ours) == value, "round \(round)")
        }
    }

    @Test func generatedNotesRoundTripBothWays() throws {
        var generator = SplitMix(state: 0xC0DE)
        for round in 0..<400 {
            var note = RichNote.sample(round)
            note.title = String.generate(using: &generator)
            note.body = String.generate(using: &generator)
            note.tags = (0..<Int(generator.next() % 4)).map { _ in String.generate(using: &generator) }
            note.rating = Double.generateFinite(using: &generator)
            note.ratio = Float(bitPattern: UInt32(truncatingIfNeeded: generator.next()))
            if !note.ratio.isFinite { note.ratio = 1 }
            note.views = Int(bitPattern: UInt(generator.next()))
            note.bigCount = generator.next()
            note.created = Date(timeIntervalSince1970: Double(Int32(truncatingIfNeeded: generator.next())) / 7)
            note.counts = [String.generate(using: &generator): Int(Int32(truncatingIfNeeded: generator.next()))]
            let ours = try DirectJSONEncoder().encode(note)
            #expect(try JSONDecoder().decode(RichNote.self, from: ours) == note, "round \(round)")
            let theirs = try JSONEncoder().encode(note)
            #expect(try DirectJSONDecoder().decode(RichNote.self, from: theirs) == note, "round \(round)")
        }
    }
}

extension String {
    /// Up to 24 scalars from every plane: ASCII (escapes and controls included), Latin,
    /// CJK, and astral ones (emoji), never a surrogate.
    static func generate(using generator: inout SplitMix) -> String {
        var scalars = String.UnicodeScalarView()
        for _ in 0..<Int(generator.next() % 24) {
            let pick = generator.next()
            let value: UInt32 =
                switch pick % 4 {
                case 0: UInt32(pick >> 8 % 0x80)
                case 1: 0x80 + UInt32(pick >> 8 % 0x700)
                case 2: 0x3000 + UInt32(pick >> 8 % 0x5000)
                default: 0x1F300 + UInt32(pick >> 8 % 0x300)
                }
            scalars.append(Unicode.Scalar(value) ?? "?")
        }
        return String(scalars)
    }
}

extension Double {
    /// A finite double of any magnitude and sign, from its bits.
    static func generateFinite(using generator: inout SplitMix) -> Double {
        let value = Double(bitPattern: generator.next())
        return value.isFinite ? value : 0.5
    }
}

extension AnyJSON {
    /// A document up to `depth` levels deep. Numbers are those JSON keeps exactly through a
    /// `Double`: integers up to 2⁵³ and random finite doubles.
    static func generate(depth: Int, using generator: inout SplitMix) -> AnyJSON {
        let pick = generator.next() % (depth > 0 ? 6 : 4)
        switch pick {
        case 0: return .null
        case 1: return .bool(generator.next() % 2 == 0)
        case 2:
            return generator.next() % 2 == 0
                ? .number(Double(Int64(truncatingIfNeeded: generator.next()) >> 11))
                : .number(Double.generateFinite(using: &generator))
        case 3: return .string(String.generate(using: &generator))
        case 4:
            return .array((0..<Int(generator.next() % 5)).map { _ in generate(depth: depth - 1, using: &generator) })
        default:
            var members: [String: AnyJSON] = [:]
            for _ in 0..<Int(generator.next() % 5) {
                members[String.generate(using: &generator)] = generate(depth: depth - 1, using: &generator)
            }
            return .object(members, hadDuplicateNames: false)
        }
    }
}
