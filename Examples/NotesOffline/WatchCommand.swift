import Foundation
import SwiftyCacheCodable

/// `watch [URL...]`: prints a line for each page that another `notes-offline` process (a `sync`,
/// a `fetch`, a `remove`) updates or removes, until Ctrl-C. It opens the library read-only, so
/// it runs beside the writer, and follows its journal.
struct WatchCommand: Command {
    static let spec = CommandSpec(
        name: "watch",
        abstract: "Print a line for each page another notes-offline process updates or removes, until Ctrl-C.",
        arguments: [
            ArgumentSpec(name: "URL", help: "pages to watch (every page when none)", isRepeated: true, isOptional: true)
        ],
        examples: [
            "notes-offline watch", "notes-offline watch https://example.com/notes/a.html",
        ])

    func run(_ parsed: ParsedCommand, output: Output) async throws -> Int32 {
        let urls = try parsed.urls()
        let library = try NotesLibrary.openForReading(
            root: try parsed.cacheDirectory(), durable: parsed.flag("--durable"))
        defer { library.close() }
        guard let pages = library.pages else {
            output.error("no pages are cached yet: run 'notes-offline sync URL' first")
            return 1
        }
        // Each change names its page: the cache reads the address from the entry when this
        // process has not read the page itself.
        let changes = pages.changes()
        let watched = Set(urls)
        output.line(
            urls.isEmpty ? "watching every page (Ctrl-C to stop)" : "watching \(urls.count) pages (Ctrl-C to stop)")
        for await change in changes {
            if let url = change.key, !watched.isEmpty, !watched.contains(url) { continue }
            output.line(Self.describe(change))
        }
        return 0
    }

    static func describe(_ change: ObjectCacheChange<URL>) -> String {
        let page = change.key?.absoluteString ?? "a page"
        switch change.kind {
        case .set: return "updated \(page)"
        case .removed: return "removed \(page)"
        case .expired: return "expired \(page)"
        case .evicted: return "evicted \(page)"
        case .cleared: return "cleared: every page may have changed"
        case .overflowed: return "many pages changed"
        }
    }
}
