import Foundation

/// `demo`: the whole flow on the sample notes shipped with the example, with no network.
struct DemoCommand: Command {
    static let name = "demo"
    static let usage = "notes-offline demo [--cache-dir DIR]"
    static let summary = "Cache the bundled sample notes (file URLs), list them, show one, print stats."

    func run(_ arguments: Arguments, output: Output) async throws -> Int32 {
        guard let samples = Bundle.module.url(forResource: "Samples", withExtension: nil) else {
            throw FetchError(description: "the sample notes are missing from the build")
        }
        let index = samples.appending(path: "index.html")
        output.line("== sync \(index.absoluteString)")
        var sync = arguments
        sync.positionals = [index.absoluteString]
        let status = try await SyncCommand().run(sync, output: output)
        guard status == 0 else { return status }

        output.line("")
        output.line("== list")
        _ = try await ListCommand().run(arguments, output: output)

        let links = HTMLText.links(in: try String(contentsOf: index, encoding: .utf8))
        if let first = links.first, let note = URL(string: first, relativeTo: index)?.absoluteURL {
            output.line("")
            output.line("== show \(note.absoluteString)")
            var show = arguments
            show.positionals = [note.absoluteString]
            show.isRaw = false
            _ = try await ShowCommand().run(show, output: output)
        }

        output.line("")
        output.line("== stats")
        return try await StatsCommand().run(arguments, output: output)
    }
}
