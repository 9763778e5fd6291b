import Foundation
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Where the CLI writes: results to stdout, one line per failure to stderr.
struct Output: Sendable {
    /// Whether stdout is a terminal (progress redraws one line) or a pipe or file (plain log).
    let isTerminal = isatty(STDOUT_FILENO) == 1

    func line(_ text: String) {
        FileHandle.standardOutput.write(Data((text + "\n").utf8))
    }

    func raw(_ text: String) {
        FileHandle.standardOutput.write(Data(text.utf8))
    }

    func error(_ text: String) {
        FileHandle.standardError.write(Data("notes-offline: error: \(text)\n".utf8))
    }

    func table(header: [String], rows: [[String]]) {
        let all = [header] + rows
        let widths = header.indices.map { column in all.map { $0[column].count }.max() ?? 0 }
        for row in all {
            let cells = row.enumerated().map { column, cell in
                column == row.count - 1 ? cell : cell.padding(toLength: widths[column], withPad: " ", startingAt: 0)
            }
            line(cells.joined(separator: "  "))
        }
    }
}

/// The `[12/40] notes/foo.html 3.1 KiB` lines of a sync: redrawn in place on a terminal,
/// one per page otherwise.
final class Progress: Sendable {
    private let total: Int
    private let output: Output
    private let state = Mutex((done: 0, failed: 0))

    init(total: Int, output: Output) {
        self.total = total
        self.output = output
    }

    var completedCount: Int { state.withLock { $0.done } }
    var failedCount: Int { state.withLock { $0.failed } }

    func completed(_ url: URL, relativeTo index: URL, bytes: Int, wasModified: Bool) {
        let done = state.withLock { state in
            state.done += 1
            return state.done + state.failed
        }
        let base = index.deletingLastPathComponent().absoluteString
        let name =
            url.absoluteString.hasPrefix(base) ? String(url.absoluteString.dropFirst(base.count)) : url.absoluteString
        let text = "[\(done)/\(total)] \(name) \(formatBytes(bytes))\(wasModified ? "" : " (unchanged)")"
        if output.isTerminal {
            output.raw("\r\u{1B}[2K" + text)
        } else {
            output.line(text)
        }
    }

    func failed(_ message: String) {
        state.withLock { $0.failed += 1 }
        if output.isTerminal { output.raw("\r\u{1B}[2K") }
        output.error(message)
    }

    func finish() {
        if output.isTerminal && total > 0 { output.raw("\n") }
    }
}

/// Turns Ctrl-C into a request to stop starting new work, so what is cached stays cached and
/// the command exits cleanly with status 130.
final class Interrupt {
    private final class Flag: Sendable {
        let value = Atomic(false)
    }

    private let flag = Flag()
    private let source: any DispatchSourceSignal

    init() {
        signal(SIGINT, SIG_IGN)
        source = DispatchSource.makeSignalSource(signal: SIGINT, queue: .global())
        let flag = self.flag
        source.setEventHandler {
            flag.value.store(true, ordering: .relaxed)
        }
        source.resume()
    }

    var isRequested: Bool { flag.value.load(ordering: .relaxed) }

    func restore() {
        source.cancel()
        signal(SIGINT, SIG_DFL)
    }
}
