import Foundation
import SwiftyCacheCodable

/// `stats`: pages, bytes and the limit.
struct StatsCommand: Command {
    static let spec = CommandSpec(
        name: "stats",
        abstract: "Print how many pages are cached, their bytes and the limit.",
        examples: ["notes-offline stats"])

    func run(_ parsed: ParsedCommand, output: Output) async throws -> Int32 {
        let library = try NotesLibrary.openForReading(
            root: try parsed.cacheDirectory(), durable: parsed.flag("--durable"))
        defer { library.close() }
        output.line("cache:   \(library.root.path(percentEncoded: false))")
        output.line("pages:   \(library.cachedCount)")
        let pinned = try await library.pinnedPageCount()
        output.line("pinned:  \(pinned) (\(formatBytes(library.pages?.pinnedDiskSize ?? 0)))")
        output.line("used:    \(formatBytes(library.usedBytes)) of \(formatBytes(library.settings.maxSize))")
        output.line("limit:   \(formatBytes(library.settings.maxSize)) (change it with 'notes-offline limit SIZE')")
        return 0
    }
}
