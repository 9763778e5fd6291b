import Foundation
import SwiftyCacheCodable

/// `sync INDEX-URL`: the index and every page it links to on the same host.
struct SyncCommand: Command {
    static let spec = CommandSpec(
        name: "sync",
        abstract: "Fetch an index page and every page it links to on its host.",
        arguments: [ArgumentSpec(name: "INDEX-URL", help: "a page that links to your notes")],
        options: [
            OptionSpec(
                name: "--concurrency", valueName: "N", help: "requests in flight at once, 1 to 64", defaultText: "4"),
            .timeout,
            OptionSpec(
                name: "--max-age", valueName: "SECONDS",
                help: "leave pages fetched less than this long ago as they are, without a request", defaultText: "0"),
            OptionSpec(
                name: "--span-hosts", valueName: nil, help: "also follow links and redirects to other hosts"),
        ],
        examples: [
            "notes-offline sync https://example.com/notes/",
            "notes-offline sync https://example.com/notes/ --max-age 3600   # only pages older than an hour",
            "notes-offline sync https://example.com/notes/ --concurrency 8 --timeout 10",
        ])

    /// The tally of a sync.
    struct Tally {
        var new = 0, updated = 0, unchanged = 0, skipped = 0, failed = 0
        var cached: [URL] = []
    }

    func run(_ parsed: ParsedCommand, output: Output) async throws -> Int32 {
        let concurrency = try parsed.number("--concurrency", in: 1...64, default: 4)
        let maxAge = Duration.seconds(try parsed.number("--max-age", in: 0...31_536_000, default: 0))
        let timeout = try parsed.timeout()
        let root = try parsed.cacheDirectory()
        let indexURL = try NoteURL.parse(parsed.positionals[0])
        let spanHosts = parsed.flag("--span-hosts")
        let fetcher = Fetcher(timeout: timeout, spanHosts: spanHosts)
        let library = try NotesLibrary.openForWriting(root: root, durable: parsed.flag("--durable"))

        let interrupt = Interrupt()
        defer { interrupt.restore() }
        let work = Task {
            try await sync(
                indexURL, library: library, fetcher: fetcher, concurrency: concurrency, maxAge: maxAge,
                spanHosts: spanHosts, output: output)
        }
        interrupt.onInterrupt { work.cancel() }
        let tally: Tally
        let total: Int
        do {
            (tally, total) = try await work.value
            library.close()
        } catch {
            library.close()
            guard error is CancellationError else { throw error }
            output.error("interrupted before the index was cached")
            return 130
        }
        if interrupt.isRequested {
            output.error("interrupted: \(tally.cached.count) pages cached this run; they stay cached")
            return 130
        }
        let name = indexURL.lastPathComponent.isEmpty ? indexURL.absoluteString : indexURL.lastPathComponent
        output.line(
            "synced \(name): \(tally.new) new, \(tally.updated) updated, \(tally.unchanged) unchanged, "
                + "\(tally.skipped) skipped, \(tally.failed) failed")
        // What the limit kept, as a fresh reader sees the disk (not the writer's memory tier).
        let reader = try NotesLibrary.openForReading(root: root, durable: parsed.flag("--durable"))
        defer { reader.close() }
        let held = tally.cached.filter { (try? reader.pages?.containsValue(forKey: $0)) == true }.count
        if held < tally.cached.count {
            output.line(
                "the limit (\(formatBytes(library.settings.maxSize))) holds \(held) of \(tally.cached.count) pages: "
                    + "raise it with 'notes-offline limit SIZE'")
        } else {
            output.line("\(held) pages cached: the index and \(held - 1) linked pages")
        }
        return total > 0 && tally.failed == total ? 1 : 0
    }

    /// Fetches the index, then its links, `concurrency` at a time; one result line per page.
    private func sync(
        _ indexURL: URL, library: NotesLibrary, fetcher: Fetcher, concurrency: Int, maxAge: Duration, spanHosts: Bool,
        output: Output
    ) async throws -> (Tally, Int) {
        var tally = Tally()
        let indexResult = try await library.refresh(indexURL, maxAge: maxAge, with: fetcher)
        guard let index = indexResult.page else {
            if case .skipped(let reason) = indexResult {
                throw FetchError(description: "\(indexURL.absoluteString): \(reason)")
            }
            return (tally, 0)
        }
        tally.cached.append(indexURL)
        let targets = Self.linkTargets(in: index.body, of: indexURL, spanHosts: spanHosts)
        let base = indexURL.deletingLastPathComponent().absoluteString
        func name(_ url: URL) -> String {
            url.absoluteString.hasPrefix(base) ? String(url.absoluteString.dropFirst(base.count)) : url.absoluteString
        }
        let progress = SyncProgress(output: output, total: targets.count)
        defer { progress.clear() }
        try await withThrowingTaskGroup(of: (URL, Result<NotesLibrary.Refresh, any Error>).self) { group in
            var pending = targets.makeIterator()
            func startNext() -> Bool {
                guard !Task.isCancelled, let url = pending.next() else { return false }
                progress.started(name(url))
                group.addTask {
                    do {
                        return (url, .success(try await library.refresh(url, maxAge: maxAge, with: fetcher)))
                    } catch {
                        return (url, .failure(error))
                    }
                }
                return true
            }
            for _ in 0..<concurrency where !startNext() { break }
            while let (url, result) = try await group.next() {
                progress.finished(name(url))
                switch result {
                case .success(let refresh):
                    switch refresh {
                    case .new: tally.new += 1
                    case .updated: tally.updated += 1
                    case .unchanged: tally.unchanged += 1
                    case .skipped(let reason):
                        tally.skipped += 1
                        output.note("skipped \(name(url)): \(reason)")
                    }
                    if let page = refresh.page {
                        tally.cached.append(url)
                        output.line("\(Self.verb(refresh)) \(name(url))  \(formatBytes(page.byteCount))")
                    }
                case .failure(let error):
                    if error is CancellationError || Task.isCancelled { continue }
                    tally.failed += 1
                    output.error("\(error)")
                }
                _ = startNext()
            }
        }
        return (tally, targets.count)
    }

    /// The pages the index links to, each once, in the order they first appear: on the index's
    /// host only, unless `spanHosts`.
    private static func linkTargets(in body: String, of indexURL: URL, spanHosts: Bool) -> [URL] {
        var targets: [URL] = []
        var seen: Set<URL> = [indexURL]
        for link in HTMLText.links(in: body) {
            guard let url = URL(string: link, relativeTo: indexURL).flatMap(NoteURL.normalize),
                spanHosts || (url.scheme == indexURL.scheme && url.host == indexURL.host), seen.insert(url).inserted
            else { continue }
            targets.append(url)
        }
        return targets
    }

    /// The word a result line starts with, padded to one width.
    static func verb(_ refresh: NotesLibrary.Refresh) -> String {
        switch refresh {
        case .new: "new      "
        case .updated: "updated  "
        case .unchanged: "unchanged"
        case .skipped: "skipped  "
        }
    }
}
