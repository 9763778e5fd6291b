import Foundation

/// `notes-offline`: keeps an offline cache of notes pages fetched over HTTP.
@main
struct NotesOffline {
    static let commands: [any Command.Type] = [
        FetchCommand.self, SyncCommand.self, ShowCommand.self, ListCommand.self, StatsCommand.self,
        RemoveCommand.self, ClearCommand.self, DemoCommand.self,
    ]

    static let options = """
        Options:
          --cache-dir DIR   where the cache lives (default: \(NotesLibrary.defaultRoot.path(percentEncoded: false)))
          --max-size SIZE   the size limit, such as 50MB, 512KB, 1GB; binary units (default: 50MB)
          --offline         never touch the network; a page that is not cached is an error
          --help            help for the command
        """

    static func main() async {
        let output = Output()
        let status: Int32
        do {
            let arguments = try Arguments(Array(CommandLine.arguments.dropFirst()))
            status = try await run(arguments, output: output)
        } catch let error as UsageError {
            output.error("\(error.description). Run 'notes-offline --help' for usage.")
            status = 2
        } catch {
            output.error("\(error)")
            status = 1
        }
        exit(status)
    }

    static func run(_ arguments: Arguments, output: Output) async throws -> Int32 {
        guard let name = arguments.command else {
            output.line(generalHelp)
            return arguments.wantsHelp ? 0 : 2
        }
        if name == "help" {
            output.line(generalHelp)
            return 0
        }
        guard let command = commands.first(where: { $0.name == name }) else {
            throw UsageError(description: "unknown command '\(name)'")
        }
        if arguments.wantsHelp {
            output.line("Usage: \(command.usage)\n\n\(command.summary)\n\n\(options)")
            return 0
        }
        return try await command.init().run(arguments, output: output)
    }

    static var generalHelp: String {
        let list = commands.map { "  \($0.name.padding(toLength: 8, withPad: " ", startingAt: 0)) \($0.summary)" }
        return """
            notes-offline: keep an offline cache of notes pages fetched over HTTP.

            Usage: notes-offline COMMAND [ARGUMENTS] [OPTIONS]

            Commands:
            \(list.joined(separator: "\n"))

            \(options)

            Try 'notes-offline demo' first: it runs the whole flow on bundled sample notes.
            """
    }
}
