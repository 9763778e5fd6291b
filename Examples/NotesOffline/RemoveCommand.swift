import Foundation
import SwiftyCacheCodable

/// `remove URL...`.
struct RemoveCommand: Command {
    static let spec = CommandSpec(
        name: "remove",
        abstract: "Remove pages from the cache.",
        arguments: [ArgumentSpec(name: "URL", help: "a cached page", isRepeated: true)],
        examples: ["notes-offline remove https://example.com/notes/a.html https://example.com/notes/b.html"])

    func run(_ parsed: ParsedCommand, output: Output) async throws -> Int32 {
        try await forEachURL(parsed) { url, library in
            guard try await library.pages?.removeValue(forKey: url) == true else {
                output.error("\(url.absoluteString) is not cached")
                return false
            }
            output.line("removed \(url.absoluteString)")
            return true
        }
    }
}
