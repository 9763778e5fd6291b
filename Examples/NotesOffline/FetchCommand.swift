import Foundation
import SwiftyCacheCodable

/// `fetch URL...`: downloads pages and caches them.
struct FetchCommand: Command {
    static let spec = CommandSpec(
        name: "fetch",
        abstract: "Download pages and cache them; a refetch asks if they changed.",
        arguments: [ArgumentSpec(name: "URL", help: "a page to fetch", isRepeated: true)],
        options: [
            .offline, .timeout,
            OptionSpec(name: "--span-hosts", valueName: nil, help: "follow redirects to other hosts"),
        ],
        examples: [
            "notes-offline fetch https://example.com/notes/a.html https://example.com/notes/b.html",
            "notes-offline fetch --offline https://example.com/notes/a.html   # only says whether it is cached",
        ])

    func run(_ parsed: ParsedCommand, output: Output) async throws -> Int32 {
        let urls = try parsed.urls()
        let timeout = try parsed.timeout()
        let root = try parsed.cacheDirectory()
        if parsed.flag("--offline") {
            let library = try NotesLibrary.openForReading(root: root, durable: parsed.flag("--durable"))
            defer { library.close() }
            var failures: Int32 = 0
            for url in urls {
                if let page = try library.cachedPage(url) {
                    output.line("cached     \(url.absoluteString)  \(formatBytes(page.byteCount))  \(page.title)")
                } else {
                    output.error("\(url.absoluteString): not cached, and --offline forbids the network")
                    failures += 1
                }
            }
            return failures == 0 ? 0 : 1
        }
        let library = try NotesLibrary.openForWriting(root: root, durable: parsed.flag("--durable"))
        defer { library.close() }
        let fetcher = Fetcher(timeout: timeout, spanHosts: parsed.flag("--span-hosts"))
        var failures: Int32 = 0
        for url in urls {
            do {
                let result = try await library.refresh(url, with: fetcher)
                switch result {
                case .new(let page), .updated(let page), .unchanged(let page):
                    let verb = SyncCommand.verb(result)
                    output.line("\(verb) \(url.absoluteString)  \(formatBytes(page.byteCount))  \(page.title)")
                case .skipped(let reason):
                    output.note("skipped \(url.absoluteString): \(reason)")
                }
            } catch {
                output.error("\(error)")
                failures += 1
            }
        }
        return failures == 0 ? 0 : 1
    }
}
