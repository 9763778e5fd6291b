import Foundation
import SwiftyCacheCodable
import SwiftyCacheCore

/// `pin URL...`: keeps pages whatever the size limit, until `unpin`.
struct PinCommand: Command {
    static let spec = CommandSpec(
        name: "pin",
        abstract: "Keep cached pages whatever the size limit (up to a third of it), until unpinned.",
        arguments: [ArgumentSpec(name: "URL", help: "a cached page", isRepeated: true)],
        examples: ["notes-offline pin https://example.com/notes/a.html"])

    func run(_ parsed: ParsedCommand, output: Output) async throws -> Int32 {
        try await forEachURL(parsed) { url, library in
            do {
                guard try await library.pages?.pin(url) == true else {
                    output.error("\(url.absoluteString) is not cached; fetch it first")
                    return false
                }
            } catch let error as ObjectCacheError where (error.cause as? CacheError)?.code == .pinLimitExceeded {
                output.error(
                    "\(url.absoluteString): pinned pages may take "
                        + "\(formatBytes(library.pages?.maxPinnedDiskSize ?? 0)) of the limit; "
                        + "unpin some or raise it with 'notes-offline limit'"
                )
                return false
            }
            output.line("pinned \(url.absoluteString)")
            return true
        }
    }
}

/// `unpin URL...`: lets pages go again when the cache is full.
struct UnpinCommand: Command {
    static let spec = CommandSpec(
        name: "unpin",
        abstract: "Let pinned pages be evicted again when the cache is full.",
        arguments: [ArgumentSpec(name: "URL", help: "a pinned page", isRepeated: true)],
        examples: ["notes-offline unpin https://example.com/notes/a.html"])

    func run(_ parsed: ParsedCommand, output: Output) async throws -> Int32 {
        try await forEachURL(parsed) { url, library in
            guard try await library.pages?.unpin(url) == true else {
                output.error("\(url.absoluteString) is not pinned")
                return false
            }
            output.line("unpinned \(url.absoluteString)")
            return true
        }
    }
}
