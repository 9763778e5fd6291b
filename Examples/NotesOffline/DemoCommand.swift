import Foundation
import SwiftyCacheCodable

/// `demo`: the whole flow on the sample notes shipped with the example, with no network, in a
/// cache of its own.
struct DemoCommand: Command {
    static let spec = CommandSpec(
        name: "demo",
        abstract: "Run the whole flow on bundled sample notes, in a temporary cache.",
        options: [OptionSpec(name: "--keep", valueName: nil, help: "keep the demo's cache afterwards")],
        examples: ["notes-offline demo", "notes-offline demo --keep"])

    func run(_ parsed: ParsedCommand, output: Output) async throws -> Int32 {
        guard let samples = Bundle.module.url(forResource: "Samples", withExtension: nil) else {
            throw FetchError(description: "the sample notes are missing from the build")
        }
        let chosen = try parsed.cacheDirectory()
        let root =
            chosen
            ?? FileManager.default.temporaryDirectory.appending(
                path: "notes-offline-demo-\(UUID().uuidString.prefix(8))", directoryHint: .isDirectory)
        let keep = parsed.flag("--keep") || chosen != nil
        defer { if !keep { try? FileManager.default.removeItem(at: root) } }
        output.line("demo cache: \(Output.shorten(root.path(percentEncoded: false), to: 60))")
        output.line(keep ? "(kept afterwards)" : "(removed at the end; --keep keeps it)")
        var common = ParsedCommand()
        common.values["--cache-dir"] = root.path(percentEncoded: false)

        let index = samples.appending(path: "index.html")
        output.line("")
        output.line("== 1. sync: the sample index page and the notes it links to (file URLs)")
        var sync = common
        sync.positionals = [index.absoluteString]
        let status = try await SyncCommand().run(sync, output: output)
        guard status == 0 else { return status }

        output.line("")
        output.line("== 2. list: what is cached now, read without changing the cache")
        _ = try await ListCommand().run(common, output: output)

        let links = HTMLText.links(in: try String(contentsOf: index, encoding: .utf8))
        if let first = links.first, let note = URL(string: first, relativeTo: index).flatMap(NoteURL.normalize) {
            output.line("")
            output.line("== 3. show: \(note.lastPathComponent), from the cache alone")
            var show = common
            show.positionals = [note.absoluteString]
            _ = try await ShowCommand().run(show, output: output)
        }

        output.line("")
        output.line("== 4. stats: pages, bytes and the limit")
        return try await StatsCommand().run(common, output: output)
    }
}
