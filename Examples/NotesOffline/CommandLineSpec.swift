import Foundation

/// A usage mistake: one line on stderr with a hint, exit status 2.
struct UsageError: Error, CustomStringConvertible {
    var description: String
}

/// One option a command accepts: a flag, or an option that takes a value.
struct OptionSpec: Sendable {
    var name: String
    /// The value's placeholder (`SECONDS`), `nil` for a flag.
    var valueName: String?
    var help: String
    /// Shown in the help as `(default: …)`.
    var defaultText: String?

    static let cacheDirectory = OptionSpec(
        name: "--cache-dir", valueName: "DIR",
        help: "where the cache lives: an empty or new folder, or one notes-offline created",
        defaultText: NotesLibrary.defaultRoot.path(percentEncoded: false))
    static let durable = OptionSpec(
        name: "--durable", valueName: nil,
        help: "keep a new library where the system never purges it (~/.local/share, Application Support)")
    static let offline = OptionSpec(
        name: "--offline", valueName: nil, help: "never touch the network; a page that is not cached is an error")
    static let timeout = OptionSpec(
        name: "--timeout", valueName: "SECONDS", help: "how long one request may take", defaultText: "30")
    static let help = OptionSpec(name: "--help", valueName: nil, help: "show this help")
}

/// A positional argument.
struct ArgumentSpec: Sendable {
    var name: String
    var help: String
    var isRepeated = false
    var isOptional = false
}

/// What a command declares about its command line; parses it and writes its help, in the
/// manner of swift-argument-parser (without the dependency).
struct CommandSpec: Sendable {
    var name: String
    var abstract: String
    var arguments: [ArgumentSpec] = []
    var options: [OptionSpec] = []
    var examples: [String] = []

    private var allOptions: [OptionSpec] { options + [.cacheDirectory, .durable, .help] }

    /// The usage line: `notes-offline fetch URL... [--offline] [--timeout SECONDS] …`.
    var usage: String {
        var parts = ["notes-offline", name]
        for argument in arguments {
            let text = argument.name + (argument.isRepeated ? "..." : "")
            parts.append(argument.isOptional ? "[\(text)]" : text)
        }
        for option in allOptions where option.name != "--help" {
            parts.append("[\(option.name)\(option.valueName.map { " \($0)" } ?? "")]")
        }
        return parts.joined(separator: " ")
    }

    /// The command's whole help: usage, what it does, arguments, every option with its default,
    /// and examples.
    var help: String {
        var lines = ["Usage: \(usage)", "", abstract]
        if !arguments.isEmpty {
            lines += ["", "Arguments:"]
            lines += arguments.map { "  " + $0.name.padding(toLength: 20, withPad: " ", startingAt: 0) + $0.help }
        }
        lines += ["", "Options:"]
        for option in allOptions {
            let label = option.name + (option.valueName.map { " \($0)" } ?? "")
            let defaultText = option.defaultText.map { " (default: \($0))" } ?? ""
            lines.append("  " + label.padding(toLength: 20, withPad: " ", startingAt: 0) + option.help + defaultText)
        }
        if !examples.isEmpty {
            lines += ["", "Examples:"]
            lines += examples.map { "  " + $0 }
        }
        return lines.joined(separator: "\n")
    }

    /// Parses the arguments after the command's name. Options may stand anywhere; `--` ends them.
    ///
    /// - Throws: ``UsageError`` for an unknown option, a missing value, a missing argument or
    ///   one too many.
    func parse(_ words: [String]) throws -> ParsedCommand {
        var parsed = ParsedCommand()
        var remaining = words[...]
        while let word = remaining.popFirst() {
            if word == "--" {
                parsed.positionals += remaining
                break
            }
            guard word.hasPrefix("-"), word != "-" else {
                parsed.positionals.append(word)
                continue
            }
            let parts = word.split(separator: "=", maxSplits: 1).map(String.init)
            let name = parts[0] == "-h" ? "--help" : parts[0]
            guard let option = allOptions.first(where: { $0.name == name }) else {
                if name == "--max-size" {
                    throw UsageError(description: "'--max-size' is gone: set the limit with 'notes-offline limit SIZE'")
                }
                throw UsageError(description: "unknown option '\(name)' for '\(self.name)'")
            }
            if option.valueName == nil {
                guard parts.count == 1 else { throw UsageError(description: "option \(name) takes no value") }
                parsed.flags.insert(name)
                continue
            }
            guard let value = parts.count == 2 ? parts[1] : remaining.popFirst() else {
                throw UsageError(description: "option \(name) needs a value (\(option.valueName ?? "VALUE"))")
            }
            parsed.values[name] = value
        }
        guard !parsed.flags.contains("--help") else { return parsed }
        let required = arguments.filter { !$0.isOptional }.count
        let isUnbounded = arguments.contains { $0.isRepeated }
        if parsed.positionals.count < required, let missing = arguments.first(where: { !$0.isOptional }) {
            throw UsageError(description: "'\(name)' needs \(missing.isRepeated ? "at least one " : "")\(missing.name)")
        }
        if !isUnbounded && parsed.positionals.count > arguments.count {
            let extra = parsed.positionals[arguments.count]
            throw UsageError(
                description: arguments.isEmpty
                    ? "'\(name)' takes no arguments, got '\(extra)'" : "unexpected argument '\(extra)' for '\(name)'")
        }
        return parsed
    }
}

/// A command line after parsing: positionals, option values and flags.
struct ParsedCommand: Sendable {
    var positionals: [String] = []
    var values: [String: String] = [:]
    var flags: Set<String> = []

    func flag(_ name: String) -> Bool { flags.contains(name) }

    /// `--cache-dir`, checked: an empty value is a usage error.
    func cacheDirectory() throws -> URL? {
        guard let value = values["--cache-dir"] else { return nil }
        guard !value.trimmingCharacters(in: .whitespaces).isEmpty else {
            throw UsageError(description: "--cache-dir needs a folder, got an empty value")
        }
        return URL(filePath: (value as NSString).expandingTildeInPath, directoryHint: .isDirectory)
    }

    /// `--timeout`, checked, in seconds.
    func timeout() throws -> Double {
        guard let text = values["--timeout"] else { return 30 }
        guard let seconds = Double(text), seconds > 0, seconds <= 3600 else {
            throw UsageError(description: "--timeout takes a number of seconds from 0 to 3600, got '\(text)'")
        }
        return seconds
    }

    /// A whole number option, checked against `range`.
    func number(_ name: String, in range: ClosedRange<Int>, default value: Int) throws -> Int {
        guard let text = values[name] else { return value }
        guard let number = Int(text), range.contains(number) else {
            throw UsageError(
                description: "\(name) takes a number from \(range.lowerBound) to \(range.upperBound), got '\(text)'")
        }
        return number
    }

    /// The positionals as URLs, normalized; an invalid one is a usage error.
    func urls() throws -> [URL] {
        try positionals.map { try NoteURL.parse($0) }
    }
}

/// Parses `50MB`, `512KiB`, `1G`, `4096`. Units are binary: 1 KB = 1 KiB = 1,024 bytes.
func parseSize(_ text: String) throws -> Int {
    let trimmed = text.trimmingCharacters(in: .whitespaces)
    let digits = trimmed.prefix { $0.isNumber || $0 == "." }
    let unit = trimmed.dropFirst(digits.count).trimmingCharacters(in: .whitespaces).lowercased()
    let multipliers: [String: Double] = [
        "": 1, "b": 1, "k": 1_024, "kb": 1_024, "kib": 1_024, "m": 1_048_576, "mb": 1_048_576, "mib": 1_048_576,
        "g": 1_073_741_824, "gb": 1_073_741_824, "gib": 1_073_741_824,
    ]
    guard let number = Double(digits), let multiplier = multipliers[unit], number * multiplier >= 1,
        number * multiplier < Double(Int.max / 2)
    else {
        throw UsageError(description: "a size looks like 50MB, 512KiB or 1GB, got '\(text)'")
    }
    return Int(number * multiplier)
}

/// Formats byte counts as people read them: `3.1 KiB`.
func formatBytes(_ count: Int) -> String {
    if count < 1024 { return "\(count) B" }
    let units = ["KiB", "MiB", "GiB", "TiB"]
    var value = Double(count) / 1024
    var unit = 0
    while value >= 1024 && unit < units.count - 1 {
        value /= 1024
        unit += 1
    }
    return String(format: "%.1f", value) + " " + units[unit]
}

/// Formats an age: `42s`, `5m`, `3h`, `2d`.
func formatAge(_ seconds: TimeInterval) -> String {
    let seconds = max(0, Int(seconds))
    if seconds < 60 { return "\(seconds)s" }
    if seconds < 3600 { return "\(seconds / 60)m" }
    if seconds < 86_400 { return "\(seconds / 3600)h" }
    return "\(seconds / 86_400)d"
}
