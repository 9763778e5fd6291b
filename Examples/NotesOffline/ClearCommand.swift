import Foundation
import SwiftyCacheCodable

/// `clear`: every page.
struct ClearCommand: Command {
    static let spec = CommandSpec(
        name: "clear",
        abstract: "Remove every cached page (some: 'remove URL...').",
        examples: ["notes-offline clear"])

    func run(_ parsed: ParsedCommand, output: Output) async throws -> Int32 {
        let library = try NotesLibrary.openForWriting(
            root: try parsed.cacheDirectory(), durable: parsed.flag("--durable"))
        defer { library.close() }
        let count = library.cachedCount
        try await library.pages?.removeAll()
        output.line("removed \(count) pages")
        return 0
    }
}
