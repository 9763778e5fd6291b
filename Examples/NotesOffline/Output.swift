import Foundation
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Where the CLI writes: results to stdout, errors and notes to stderr, and progress to stderr
/// only when it is a terminal (one line, redrawn, never wider than the terminal). Nothing
/// written to a pipe holds a control code.
final class Output: Sendable {
    /// Whether stderr is a terminal, where progress is shown.
    let showsProgress = isatty(STDERR_FILENO) == 1
    /// One lock for every write, so a result line never lands inside a progress line.
    private let lock = Mutex(false)

    func line(_ text: String) {
        write(text + "\n", to: FileHandle.standardOutput)
    }

    func raw(_ text: String) {
        write(text, to: FileHandle.standardOutput)
    }

    func error(_ text: String) {
        write("notes-offline: error: \(text)\n", to: FileHandle.standardError)
    }

    func note(_ text: String) {
        write("notes-offline: \(text)\n", to: FileHandle.standardError)
    }

    /// Replaces the progress line (terminal only); an empty text clears it.
    func progress(_ text: String) {
        guard showsProgress else { return }
        let width = max(Self.terminalWidth() - 1, 10)
        let shown = text.count > width ? String(text.prefix(width - 1)) + "…" : text
        lock.withLock { hasProgress in
            FileHandle.standardError.write(Data(("\r\u{1B}[2K" + shown).utf8))
            hasProgress = !shown.isEmpty
        }
    }

    private func write(_ text: String, to handle: FileHandle) {
        lock.withLock { hasProgress in
            if hasProgress {
                FileHandle.standardError.write(Data("\r\u{1B}[2K".utf8))
                hasProgress = false
            }
            handle.write(Data(text.utf8))
        }
    }

    /// The terminal's width in columns (`TIOCGWINSZ` on stderr), 80 when it cannot be told.
    static func terminalWidth() -> Int {
        var size = winsize()
        guard ioctl(STDERR_FILENO, UInt(TIOCGWINSZ), &size) == 0, size.ws_col > 0 else { return 80 }
        return Int(size.ws_col)
    }

    /// A table with columns padded to their widest cell; `widths` caps columns (text past a cap
    /// is shortened in the middle).
    func table(header: [String], rows: [[String]], caps: [Int?], shortensAtEnd: Set<Int> = []) {
        let capped = rows.map { row in
            row.enumerated().map { column, cell in
                guard let cap = caps[column], cell.count > cap else { return cell }
                return shortensAtEnd.contains(column) ? String(cell.prefix(cap - 1)) + "…" : Self.shorten(cell, to: cap)
            }
        }
        let all = [header] + capped
        let widths = header.indices.map { column in all.map { $0[column].count }.max() ?? 0 }
        for row in all {
            let cells = row.enumerated().map { column, cell in
                column == row.count - 1 ? cell : cell.padding(toLength: widths[column], withPad: " ", startingAt: 0)
            }
            line(cells.joined(separator: "  "))
        }
    }

    /// `text` wrapped at word boundaries to lines of at most `width` characters (a longer word
    /// stands alone on its line).
    static func wrap(_ text: String, width: Int) -> String {
        text.split(separator: "\n", omittingEmptySubsequences: false).map { line -> String in
            guard line.count > width else { return String(line) }
            var lines: [String] = []
            var current = ""
            for word in line.split(separator: " ") {
                if !current.isEmpty && current.count + 1 + word.count > width {
                    lines.append(current)
                    current = ""
                }
                current += (current.isEmpty ? "" : " ") + word
            }
            if !current.isEmpty { lines.append(current) }
            return lines.joined(separator: "\n")
        }.joined(separator: "\n")
    }

    /// `text` in at most `width` characters, shortened in the middle with `…`.
    static func shorten(_ text: String, to width: Int) -> String {
        guard text.count > width, width > 3 else { return text }
        let head = (width - 1) / 2
        let tail = width - 1 - head
        return String(text.prefix(head)) + "…" + String(text.suffix(tail))
    }
}

/// Progress of a sync: how many pages are done, and which are in flight.
final class SyncProgress: Sendable {
    private let output: Output
    private let total: Int
    private let state = Mutex((done: 0, inFlight: [String]()))

    init(output: Output, total: Int) {
        self.output = output
        self.total = total
    }

    func started(_ name: String) {
        let text = state.withLock { state in
            state.inFlight.append(name)
            return Self.describe(state.done, total, state.inFlight)
        }
        output.progress(text)
    }

    func finished(_ name: String) {
        let text = state.withLock { state in
            state.done += 1
            state.inFlight.removeAll { $0 == name }
            return Self.describe(state.done, total, state.inFlight)
        }
        output.progress(text)
    }

    func clear() { output.progress("") }

    private static func describe(_ done: Int, _ total: Int, _ inFlight: [String]) -> String {
        "[\(done)/\(total)] " + (inFlight.isEmpty ? "" : "fetching " + inFlight.joined(separator: ", "))
    }
}

/// Ctrl-C: the first cancels the work in flight (requests stop at once, what is cached stays
/// cached, the command exits with 130); a second one exits at once.
final class Interrupt {
    /// What the signal handler shares with the command.
    private final class State: Sendable {
        let presses = Atomic(0)
        let cancel = Mutex<(@Sendable () -> Void)?>(nil)
    }

    private let state = State()
    private let source: any DispatchSourceSignal

    init() {
        signal(SIGINT, SIG_IGN)
        source = DispatchSource.makeSignalSource(signal: SIGINT, queue: .global())
        let state = self.state
        source.setEventHandler {
            let presses = state.presses.add(1, ordering: .relaxed).newValue
            if presses >= 2 {
                FileHandle.standardError.write(Data("\nnotes-offline: interrupted\n".utf8))
                exit(130)
            }
            state.cancel.withLock { $0 }?()
        }
        source.resume()
    }

    /// What the first Ctrl-C does.
    func onInterrupt(_ action: @escaping @Sendable () -> Void) {
        state.cancel.withLock { $0 = action }
    }

    var isRequested: Bool { state.presses.load(ordering: .relaxed) > 0 }

    func restore() {
        source.cancel()
        signal(SIGINT, SIG_DFL)
    }
}
