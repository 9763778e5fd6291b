import Foundation
import Testing

@testable import SwiftyCacheCore

/// `withUTF8Bytes`: the bytes of small, native and non-ASCII strings, as `utf8` lists them.
@Suite struct StringUTF8BytesTests {
    @Test func everyKindOfStringLendsItsUTF8() throws {
        let large = String(repeating: "0123456789abcdef", count: 8)
        let strings = [
            "", "a", "fifteen-bytes!!", "sixteen-bytes!!!", large, "é🙂 mixed", String(large.dropFirst(3)),
            String(decoding: Data("from data".utf8), as: UTF8.self),
        ]
        for string in strings {
            #expect(string.withUTF8Bytes { Array($0) } == Array(string.utf8), "\(string)")
        }
        struct Failure: Error {}
        #expect(throws: Failure.self) { try "x".withUTF8Bytes { _ in throw Failure() } }
    }
}
