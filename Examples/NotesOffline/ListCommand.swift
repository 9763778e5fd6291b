import Foundation
import SwiftyCacheCodable

/// `list`: a table of the cached pages that fits 80 columns.
struct ListCommand: Command {
    static let spec = CommandSpec(
        name: "list",
        abstract: "List cached pages: page, title, size, age.",
        options: [OptionSpec(name: "--wide", valueName: nil, help: "full URLs and titles, however wide")],
        examples: ["notes-offline list", "notes-offline list --wide | grep example.com"])

    func run(_ parsed: ParsedCommand, output: Output) async throws -> Int32 {
        let library = try NotesLibrary.openForReading(
            root: try parsed.cacheDirectory(), durable: parsed.flag("--durable"))
        defer { library.close() }
        let keys = try await library.pages?.keys() ?? []
        let pages = try keys.compactMap { try library.pages?.value(forKey: $0) }
            .sorted { $0.url.absoluteString < $1.url.absoluteString }
        guard !pages.isEmpty else {
            output.line("no pages cached in \(library.root.path(percentEncoded: false))")
            return 0
        }
        let now = Date()
        let wide = parsed.flag("--wide")
        let prefix = wide ? "" : Self.commonFolder(of: pages.map(\.url.absoluteString))
        if !prefix.isEmpty { output.line("pages under \(Output.shorten(prefix, to: 66)):") }
        let pinned = Set(try pages.map(\.url).filter { try library.pages?.isPinned($0) == true })
        let rows = pages.map {
            [
                (pinned.contains($0.url) ? "* " : "") + String($0.url.absoluteString.dropFirst(prefix.count)),
                $0.title, formatBytes($0.byteCount), formatAge(now.timeIntervalSince($0.fetchedAt)),
            ]
        }
        // PAGE and TITLE share what SIZE (10), AGE (4) and the gaps (6) leave of 80 columns.
        output.table(
            header: ["PAGE", "TITLE", "SIZE", "AGE"], rows: rows,
            caps: wide ? [nil, nil, nil, nil] : [34, 26, nil, nil],
            shortensAtEnd: [1])
        if !pinned.isEmpty { output.line("* pinned: kept whatever the limit ('notes-offline unpin URL' lets it go)") }
        return 0
    }

    /// The longest common prefix of the URLs that ends with `/`.
    static func commonFolder(of urls: [String]) -> String {
        guard var prefix = urls.first else { return "" }
        for url in urls.dropFirst() {
            while !url.hasPrefix(prefix) { prefix.removeLast() }
        }
        guard let slash = prefix.lastIndex(of: "/") else { return "" }
        return String(prefix[...slash])
    }
}
