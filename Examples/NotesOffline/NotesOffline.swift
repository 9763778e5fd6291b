import Foundation

/// `notes-offline`: keeps an offline cache of notes pages fetched over HTTP.
@main
struct NotesOffline {
    static let version = "1.1.0"

    static let commands: [any Command.Type] = [
        FetchCommand.self, SyncCommand.self, ShowCommand.self, ListCommand.self, StatsCommand.self,
        RemoveCommand.self, ClearCommand.self, LimitCommand.self, DemoCommand.self,
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

    /// Runs one command line; returns the exit status.
    static func run(_ words: [String], output: Output) async throws -> Int32 {
        guard let first = words.first else {
            output.line(generalHelp)
            return 0
        }
        switch first {
        case "--help", "-h":
            output.line(generalHelp)
            return 0
        case "--version":
            output.line("notes-offline \(version) (SwiftyCache)")
            return 0
        case "help":
            // Options after `help COMMAND` (a --cache-dir, say) do not change the help.
            guard let name = words.dropFirst().first(where: { !$0.hasPrefix("-") }) else {
                output.line(generalHelp)
                return 0
            }
            output.line(try command(named: name).spec.help)
            return 0
        default:
            let command = try command(named: first)
            let parsed = try command.spec.parse(Array(words.dropFirst()))
            if parsed.flag("--help") {
                output.line(command.spec.help)
                return 0
            }
            return try await command.init().run(parsed, output: output)
        }
    }

    static func command(named name: String) throws -> any Command.Type {
        guard let command = commands.first(where: { $0.spec.name == name }) else {
            if name.hasPrefix("-") {
                throw UsageError(description: "unknown option '\(name)'; options follow a command")
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

            Usage: notes-offline COMMAND [ARGUMENTS] [OPTIONS]
                   notes-offline help COMMAND      every option of a command, with examples

            Commands:
            \(list.joined(separator: "\n"))

            Options every command takes:
              --cache-dir DIR   the cache folder (default: \(NotesLibrary.defaultRoot.path(percentEncoded: false)))
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
