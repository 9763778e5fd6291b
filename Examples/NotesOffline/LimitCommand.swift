import Foundation
import SwiftyCacheCodable

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// `limit [SIZE]`: the size limit, stored with the cache; the only command that evicts.
struct LimitCommand: Command {
    static let spec = CommandSpec(
        name: "limit",
        abstract: "Show or set the size limit; a lower one drops the oldest pages.",
        arguments: [ArgumentSpec(name: "SIZE", help: "such as 200MB, 512KiB, 1GB (binary units)", isOptional: true)],
        options: [OptionSpec(name: "--yes", valueName: nil, help: "drop pages without asking")],
        examples: ["notes-offline limit", "notes-offline limit 200MB", "notes-offline limit 1MB --yes"])

    func run(_ parsed: ParsedCommand, output: Output) async throws -> Int32 {
        let root = try parsed.cacheDirectory()
        guard let text = parsed.positionals.first else {
            let library = try NotesLibrary.openForReading(root: root, durable: parsed.flag("--durable"))
            defer { library.close() }
            output.line("limit: \(formatBytes(library.settings.maxSize)), used: \(formatBytes(library.usedBytes))")
            return 0
        }
        let size = try parseSize(text)
        let library = try NotesLibrary.openForWriting(root: root, durable: parsed.flag("--durable"))
        defer { library.close() }
        let dropped = library.pages?.keysEvicted(atLimit: size).count ?? 0
        if dropped > 0 && !parsed.flag("--yes") {
            let question = "lowering the limit to \(formatBytes(size)) drops \(dropped) of \(library.cachedCount) pages"
            guard isatty(STDIN_FILENO) == 1 else {
                output.error("\(question); run it again with --yes")
                return 1
            }
            FileHandle.standardError.write(Data("\(question). Continue? [y/N] ".utf8))
            guard let answer = readLine(), ["y", "yes"].contains(answer.lowercased()) else {
                output.line("the limit stays \(formatBytes(library.settings.maxSize))")
                return 1
            }
        }
        var settings = library.settings
        settings.maxSize = size
        try NotesLibrary.write(settings, to: library.root)
        try await library.pages?.setMaxDiskSize(size)
        output.line(
            "limit: \(formatBytes(size)) (was \(formatBytes(library.settings.maxSize)))"
                + (dropped > 0 ? "; dropped \(dropped) pages" : ""))
        return 0
    }
}
