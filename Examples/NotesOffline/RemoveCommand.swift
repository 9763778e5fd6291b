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
        let urls = try parsed.urls()
        let library = try NotesLibrary.openForWriting(root: try parsed.cacheDirectory())
        defer { library.close() }
        var failures: Int32 = 0
        for url in urls {
            if try await library.pages?.removeValue(forKey: url) == true {
                output.line("removed \(url.absoluteString)")
            } else {
                output.error("\(url.absoluteString) is not cached")
                failures += 1
            }
        }
        return failures == 0 ? 0 : 1
    }
}
