import Foundation
import SwiftyCacheCodable
import Testing

/// Escapes found by the word-at-a-time scan: every character that needs one, at every position
/// of strings one to three sixteen-byte steps long, byte for byte as Foundation writes them.
@Suite struct JSONStringEscapingTests {
    @Test(arguments: [true, false])
    func anEscapeAtAnyPositionIsWrittenAsFoundationWritesIt(escapesSlashes: Bool) throws {
        let foundation = JSONEncoder()
        if !escapesSlashes { foundation.outputFormatting = .withoutEscapingSlashes }
        let ours = DirectJSONEncoder(matching: foundation)
        let specials = ["\"", "\\", "/", "\n", "\u{01}", "\u{1F}", "\t", "é", "\u{7F}"]
        for length in [1, 7, 8, 9, 15, 16, 17, 31, 32, 33, 47] {
            for position in 0..<length {
                for special in specials {
                    var characters = Array(repeating: Character("a"), count: length)
                    characters[position] = Character(special)
                    let text = [String(characters), String(characters) + "/" + String(characters)]
                    #expect(try ours.encode(text) == foundation.encode(text), "\(text)")
                }
            }
        }
    }
}
