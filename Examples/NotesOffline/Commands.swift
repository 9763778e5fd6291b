import Foundation
import SwiftyCacheCodable
import SwiftyCacheCore

/// One subcommand: its help text and what it does.
protocol Command: Sendable {
    static var name: String { get }
    static var usage: String { get }
    static var summary: String { get }
    init()
    func run(_ arguments: Arguments, output: Output) async throws -> Int32
}

/// `fetch URL...`: downloads pages and caches them.
struct FetchCommand: Command {
    static let name = "fetch"
    static let usage = "notes-offline fetch URL... [--offline]"
    static let summary = "Download pages (http, https, file) and cache them; refetches ask whether they changed."

    func run(_ arguments: Arguments, output: Output) async throws -> Int32 {
        guard !arguments.positionals.isEmpty else { throw UsageError(description: "fetch needs at least one URL") }
        let urls = try arguments.positionals.map(parseURL)
        let library = try arguments.openLibrary()
        let fetcher = Fetcher()
        var failures: Int32 = 0
        for url in urls {
            do {
                if arguments.isOffline {
                    guard let page = try library.cachedPage(url) else {
                        throw FetchError(
                            description: "\(url.absoluteString): not cached, and --offline forbids the network")
                    }
                    output.line("cached     \(url.absoluteString)  \(formatBytes(page.byteCount))  \(page.title)")
                    continue
                }
                let (page, wasModified) = try await library.refresh(url, with: fetcher)
                output.line(
                    "\(wasModified ? "fetched  " : "unchanged") \(url.absoluteString)  \(formatBytes(page.byteCount))  \(page.title)"
                )
            } catch {
                output.error("\(error)")
                failures += 1
            }
        }
        return failures == 0 ? 0 : 1
    }
}

/// `sync INDEX-URL`: the index and every same-host page it links to.
struct SyncCommand: Command {
    static let name = "sync"
    static let usage = "notes-offline sync INDEX-URL [--concurrency N]"
    static let summary = "Fetch an index page and every page it links to on the same host, several at a time."

    func run(_ arguments: Arguments, output: Output) async throws -> Int32 {
        let indexURL = try arguments.singleURL(for: "sync")
        guard !arguments.isOffline else { throw FetchError(description: "sync needs the network; drop --offline") }
        let library = try arguments.openLibrary()
        let fetcher = Fetcher()
        let index = try await library.refresh(indexURL, with: fetcher).page
        let targets = HTMLText.links(in: index.body).compactMap { URL(string: $0, relativeTo: indexURL)?.absoluteURL }
            .filter { $0.scheme == indexURL.scheme && $0.host == indexURL.host && $0 != indexURL }
        var unique: [URL] = []
        for url in targets where !unique.contains(url) { unique.append(url) }

        let interrupt = Interrupt()
        defer { interrupt.restore() }
        let progress = Progress(total: unique.count, output: output)
        await withTaskGroup(of: Void.self) { group in
            var pending = unique.makeIterator()
            func startNext() -> Bool {
                guard !interrupt.isRequested, let url = pending.next() else { return false }
                group.addTask {
                    do {
                        let (page, wasModified) = try await library.refresh(url, with: fetcher)
                        progress.completed(url, relativeTo: indexURL, bytes: page.byteCount, wasModified: wasModified)
                    } catch {
                        progress.failed("\(error)")
                    }
                }
                return true
            }
            for _ in 0..<arguments.concurrency where !startNext() { break }
            while await group.next() != nil { _ = startNext() }
        }
        progress.finish()
        let cached = progress.completedCount
        if interrupt.isRequested {
            output.error("interrupted: \(cached) of \(unique.count) pages cached; they stay cached")
            return 130
        }
        let failed = progress.failedCount
        output.line(
            "synced \(cached) of \(unique.count) pages from \(indexURL.absoluteString)\(failed > 0 ? ", \(failed) failed" : "")"
        )
        return failed == 0 ? 0 : 1
    }
}

/// `show URL`: a cached page, never from the network.
struct ShowCommand: Command {
    static let name = "show"
    static let usage = "notes-offline show URL [--raw]"
    static let summary = "Print a cached page without touching the network; --raw prints the stored body as is."

    func run(_ arguments: Arguments, output: Output) async throws -> Int32 {
        let url = try arguments.singleURL(for: "show")
        let library = try arguments.openLibrary()
        guard let page = try library.cachedPage(url) else {
            library.count(hit: false)
            throw FetchError(description: "\(url.absoluteString) is not cached; fetch it first")
        }
        library.count(hit: true)
        if arguments.isRaw {
            output.raw(page.body)
        } else {
            output.line("# \(page.title)")
            output.line(
                "\(page.url.absoluteString) · fetched \(formatAge(Date().timeIntervalSince(page.fetchedAt))) ago · \(formatBytes(page.byteCount))"
            )
            output.line("")
            output.line(page.contentType.contains("html") ? HTMLText.plainText(of: page.body) : page.body)
        }
        return 0
    }
}

/// `list`: a table of the cached pages.
struct ListCommand: Command {
    static let name = "list"
    static let usage = "notes-offline list"
    static let summary = "List cached pages: URL, title, size, age."

    func run(_ arguments: Arguments, output: Output) async throws -> Int32 {
        let library = try arguments.openLibrary()
        let pages = try library.pages.keys().compactMap { try library.pages.value(forKey: $0) }
            .sorted { $0.url.absoluteString < $1.url.absoluteString }
        guard !pages.isEmpty else {
            output.line("no pages cached in \(library.root.path(percentEncoded: false))")
            return 0
        }
        let now = Date()
        let rows = pages.map {
            [
                $0.url.absoluteString, String($0.title.prefix(40)), formatBytes($0.byteCount),
                formatAge(now.timeIntervalSince($0.fetchedAt)),
            ]
        }
        output.table(header: ["URL", "TITLE", "SIZE", "AGE"], rows: rows)
        return 0
    }
}

/// `stats`: entries, bytes, limit, hits and misses.
struct StatsCommand: Command {
    static let name = "stats"
    static let usage = "notes-offline stats"
    static let summary = "Print the number of pages, bytes used, the limit, and show's hit and miss counts."

    func run(_ arguments: Arguments, output: Output) async throws -> Int32 {
        let library = try arguments.openLibrary()
        let counters = library.counters
        output.line("cache:   \(library.root.path(percentEncoded: false))")
        output.line("entries: \(library.pages.count)")
        output.line("used:    \(formatBytes(library.pages.diskSize)) of \(formatBytes(library.maxSize))")
        output.line("hits:    \(counters.hits)")
        output.line("misses:  \(counters.misses)")
        return 0
    }
}

/// `remove URL`.
struct RemoveCommand: Command {
    static let name = "remove"
    static let usage = "notes-offline remove URL"
    static let summary = "Remove a page from the cache."

    func run(_ arguments: Arguments, output: Output) async throws -> Int32 {
        let url = try arguments.singleURL(for: "remove")
        let library = try arguments.openLibrary()
        guard try await library.pages.removePermanently(forKey: url) else {
            throw FetchError(description: "\(url.absoluteString) is not cached")
        }
        output.line("removed \(url.absoluteString)")
        return 0
    }
}

/// `clear`.
struct ClearCommand: Command {
    static let name = "clear"
    static let usage = "notes-offline clear"
    static let summary = "Remove every cached page."

    func run(_ arguments: Arguments, output: Output) async throws -> Int32 {
        let library = try arguments.openLibrary()
        let count = library.pages.count
        try await library.pages.removeAll()
        output.line("removed \(count) pages")
        return 0
    }
}
