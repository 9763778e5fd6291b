import Foundation

/// A usage mistake: printed with a hint, exit code 2.
struct UsageError: Error, CustomStringConvertible {
    var description: String
}

/// The command line, parsed: global options may stand anywhere.
struct Arguments {
    var command: String?
    var positionals: [String] = []
    var cacheDirectory: URL?
    var maxSize: Int?
    var isOffline = false
    var isRaw = false
    var wantsHelp = false
    var concurrency = 4

    /// Options that take a value, and flags.
    static let valueOptions: Set<String> = ["--cache-dir", "--max-size", "--concurrency"]
    static let flags: Set<String> = ["--offline", "--raw", "--help", "-h"]

    init(_ arguments: [String]) throws {
        var remaining = arguments[...]
        while let argument = remaining.popFirst() {
            if argument == "--" {
                positionals += remaining
                break
            }
            guard argument.hasPrefix("-"), argument != "-" else {
                if command == nil { command = argument } else { positionals.append(argument) }
                continue
            }
            let parts = argument.split(separator: "=", maxSplits: 1).map(String.init)
            let name = parts[0]
            if Self.flags.contains(name) {
                guard parts.count == 1 else { throw UsageError(description: "option \(name) takes no value") }
                switch name {
                case "--offline": isOffline = true
                case "--raw": isRaw = true
                default: wantsHelp = true
                }
                continue
            }
            guard Self.valueOptions.contains(name) else {
                throw UsageError(description: "unknown option '\(name)'")
            }
            guard let value = parts.count == 2 ? parts[1] : remaining.popFirst() else {
                throw UsageError(description: "option \(name) needs a value")
            }
            switch name {
            case "--cache-dir":
                cacheDirectory = URL(filePath: (value as NSString).expandingTildeInPath, directoryHint: .isDirectory)
            case "--max-size":
                maxSize = try Self.parseSize(value)
            default:
                guard let number = Int(value), (1...64).contains(number) else {
                    throw UsageError(description: "--concurrency takes a number from 1 to 64, got '\(value)'")
                }
                concurrency = number
            }
        }
    }

    /// The one URL argument a command takes.
    func singleURL(for command: String) throws -> URL {
        guard positionals.count == 1 else { throw UsageError(description: "\(command) needs exactly one URL") }
        return try parseURL(positionals[0])
    }

    /// The library at `--cache-dir` (or the default root), bounded by `--max-size`.
    func openLibrary() throws -> NotesLibrary {
        try NotesLibrary.open(root: cacheDirectory, maxSize: maxSize)
    }

    /// Parses `50MB`, `512KiB`, `1G`, `4096`. Units are binary: 1 KB = 1 KiB = 1,024 bytes.
    static func parseSize(_ text: String) throws -> Int {
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
            throw UsageError(description: "--max-size takes a size such as 50MB, 512KiB or 1GB, got '\(text)'")
        }
        return Int(number * multiplier)
    }
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
