import Foundation
import SwiftyCacheCodable

/// `show URL`: a cached page, never from the network.
struct ShowCommand: Command {
    static let spec = CommandSpec(
        name: "show",
        abstract: "Print a cached page; no network, and the cache is not changed.",
        arguments: [ArgumentSpec(name: "URL", help: "a cached page (written as you like: case, #fragment, ./)")],
        options: [OptionSpec(name: "--raw", valueName: nil, help: "print the stored body as it is")],
        examples: ["notes-offline show https://example.com/notes/a.html", "notes-offline show --raw URL > a.html"])

    func run(_ parsed: ParsedCommand, output: Output) async throws -> Int32 {
        let url = try NoteURL.parse(parsed.positionals[0])
        let library = try NotesLibrary.openForReading(
            root: try parsed.cacheDirectory(), durable: parsed.flag("--durable"))
        defer { library.close() }
        guard let page = try library.cachedPage(url) else {
            throw FetchError(description: "\(url.absoluteString) is not cached; fetch it first")
        }
        if parsed.flag("--raw") {
            output.raw(page.body)
            return 0
        }
        output.line("# \(page.title)")
        let age = formatAge(Date().timeIntervalSince(page.fetchedAt))
        let detail = " · fetched \(age) ago · \(formatBytes(page.byteCount))"
        output.line(Output.shorten(page.url.absoluteString, to: max(20, 80 - detail.count)) + detail)
        output.line("")
        let text = page.contentType.lowercased().contains("html") ? HTMLText.plainText(of: page.body) : page.body
        output.line(Output.wrap(text, width: output.showsProgress ? min(Output.terminalWidth(), 100) : 80))
        return 0
    }
}
