import Foundation
import SwiftyCacheCodable

/// `notes-offline`: keeps an offline cache of notes pages fetched over HTTP.
@main
struct NotesOffline {
    static let version = "1.1.0"

    static let commands: [any Command.Type] = [
        FetchCommand.self, SyncCommand.self, ShowCommand.self, ListCommand.self, StatsCommand.self,
        RemoveCommand.self, PinCommand.self, UnpinCommand.self, ClearCommand.self, LimitCommand.self,
        DemoCommand.self, WatchCommand.self,
    ]

    static func main() async {
        let output = Output()
        let status: Int32
        do {
            status = try await run(Array(CommandLine.arguments.dropFirst()), output: output)
        } catch let error as UsageError {
            output.error("\(error.description). Run 'notes-offline --help' for usage.")
            status = 2
        } catch is CancellationError {
            status = 130
        } catch {
            output.error("\(error)")
            status = 1
        }
        exit(status)
    }

    /// Runs one command line; returns the exit status. Options may come before the command
    /// word too, as git and docker users type them (`notes-offline --cache-dir D list`): they
    /// are parsed with the command's own, wherever they stand.
    static func run(_ words: [String], output: Output) async throws -> Int32 {
        let (leading, first, rest) = try splitAtCommandWord(words)
        guard let first else {
            if leading.contains("--version") {
                output.line("notes-offline \(version) (SwiftyCache)")
                return 0
            }
            if leading.isEmpty || leading.contains("--help") || leading.contains("-h") {
                output.line(generalHelp)
                return 0
            }
            throw UsageError(description: "no command after '\(leading.joined(separator: " "))'")
        }
        switch first {
        case "help":
            // Options around `help COMMAND` (a --cache-dir, say) do not change the help.
            guard let name = rest.first(where: { !$0.hasPrefix("-") }) else {
                output.line(generalHelp)
                return 0
            }
            output.line(try command(named: name).spec.help)
            return 0
        default:
            let command = try command(named: first)
            let parsed = try command.spec.parse(leading + rest)
            if parsed.flag("--help") {
                output.line(command.spec.help)
                return 0
            }
            return try await command.init().run(parsed, output: output)
        }
    }

    /// The options before the command word (with their values), the command word, and what
    /// follows it. An option's value is never taken for the command word: `--cache-dir list`
    /// names a folder called `list`.
    static func splitAtCommandWord(_ words: [String]) throws -> (leading: [String], command: String?, rest: [String]) {
        var leading: [String] = []
        var index = words.startIndex
        while index < words.endIndex {
            let word = words[index]
            guard word.hasPrefix("-"), word != "-", word != "--" else {
                return (leading, word == "--" ? nil : word, Array(words[(index + 1)...]))
            }
            leading.append(word)
            index += 1
            if !word.contains("="), takesValue(word), index < words.endIndex {
                leading.append(words[index])
                index += 1
            }
        }
        return (leading, nil, [])
    }

    /// Whether some command's option of that name takes a value.
    static func takesValue(_ name: String) -> Bool {
        name == OptionSpec.cacheDirectory.name
            || commands.contains { $0.spec.options.contains { $0.name == name && $0.valueName != nil } }
    }

    static func command(named name: String) throws -> any Command.Type {
        guard let command = commands.first(where: { $0.spec.name == name }) else {
            if name.hasPrefix("-") {
                throw UsageError(description: "unknown option '\(name)'")
            }
            throw UsageError(description: "unknown command '\(name)'")
        }
        return command
    }

    static var generalHelp: String {
        let list = commands.map {
            "  \($0.spec.name.padding(toLength: 8, withPad: " ", startingAt: 0)) \($0.spec.abstract)"
        }
        return """
            notes-offline \(version): keep an offline cache of notes pages fetched over HTTP.

            Usage: notes-offline [OPTIONS] COMMAND [ARGUMENTS] [OPTIONS]
                   notes-offline help COMMAND      every option of a command, with examples

            Commands:
            \(list.joined(separator: "\n"))

            Options every command takes (before or after the command word):
              --cache-dir DIR   the cache folder (default: \(NotesLibrary.defaultRoot.path(percentEncoded: false)))
              --durable         keep a new library where the system never purges it
                                (\(NotesLibrary.defaultRoot(for: .durable).path(percentEncoded: false)) without --cache-dir)
              --help            help for the command
              --version         the version

            Exit status: 0 done, 1 failed (sync: the index, or every page), 2 usage mistake,
            130 interrupted (Ctrl-C; pages already cached stay cached).

            Try 'notes-offline demo' first: it runs the whole flow on bundled sample notes.
            """
    }
}

/// One subcommand: its command line and what it does.
protocol Command: Sendable {
    static var spec: CommandSpec { get }
    init()
    func run(_ parsed: ParsedCommand, output: Output) async throws -> Int32
}

extension Command {
    /// Opens the library to write and runs `body` on each URL of the command line, in order:
    /// the exit status is 1 when `body` says one failed (having reported why), 0 otherwise.
    func forEachURL(_ parsed: ParsedCommand, _ body: (URL, NotesLibrary) async throws -> Bool) async throws -> Int32 {
        let urls = try parsed.urls()
        let library = try NotesLibrary.openForWriting(
            root: try parsed.cacheDirectory(), durable: parsed.flag("--durable"))
        defer { library.close() }
        var failures: Int32 = 0
        for url in urls where try await !body(url, library) { failures += 1 }
        return failures == 0 ? 0 : 1
    }
}
