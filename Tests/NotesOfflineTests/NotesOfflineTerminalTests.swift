import Foundation
import SwiftyCacheTestSupport
import Testing

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The built `notes-offline` as a person at a terminal meets it: its arguments checked,
/// timeouts and Ctrl-C against a stalled server on 127.0.0.1, progress and prompts on a
/// terminal, the width of `list`, and the help of every command.
@Suite struct NotesOfflineTerminalTests {
    let directory = TemporaryDirectory()
    var cacheURL: URL { directory.appending("cache") }
    var cli: CLI { CLI(cacheDirectory: cacheURL) }

    @Test func argumentsAreCheckedNeverIgnored() throws {
        expectOneLineError(try cli.run(["frobnicate"]), containing: "unknown command 'frobnicate'", status: 2)
        expectOneLineError(try cli.run(["list", "--bogus"]), containing: "unknown option '--bogus'", status: 2)
        expectOneLineError(try cli.run(["fetch"]), containing: "'fetch' needs at least one URL", status: 2)
        expectOneLineError(
            try cli.run(["clear", "http://127.0.0.1:9/p002.html"]), containing: "'clear' takes no arguments",
            status: 2)
        expectOneLineError(try cli.run(["stats", "extra"]), containing: "takes no arguments", status: 2)
        expectOneLineError(try cli.run(["show", "a", "b"]), containing: "unexpected argument 'b'", status: 2)
        expectOneLineError(try cli.run(["fetch", "ftp://example.com/a"]), containing: "invalid URL", status: 2)
        expectOneLineError(try cli.run(["fetch", "not a url"]), containing: "invalid URL", status: 2)
        expectOneLineError(try cli.run(["sync", "x", "--concurrency", "0"]), containing: "--concurrency", status: 2)
        expectOneLineError(try cli.run(["fetch", "http://a/", "--timeout", "-3"]), containing: "--timeout", status: 2)
    }

    @Test func optionsMayComeBeforeOrAfterTheCommandWord() throws {
        let server = try TestHTTPServer()
        defer { server.stop() }
        server.setPage("/a.html", .init(NotesOfflineEndToEndTests.note("Alpha", "first"), etag: "\"a1\""))
        let page = server.url("/a.html").absoluteString
        let folder = cacheURL.path(percentEncoded: false)
        let fetched = try cli.run(["--cache-dir", folder, "--timeout", "5", "fetch", page], withCacheDirectory: false)
        #expect(fetched.status == 0, "\(fetched.stderr)")
        let before = try cli.run(["--cache-dir", folder, "list"], withCacheDirectory: false)
        let after = try cli.run(["list", "--cache-dir", folder], withCacheDirectory: false)
        #expect(before.status == 0 && after.status == 0)
        #expect(before.stdout == after.stdout)
        #expect(before.stdout.contains("Alpha"))
        let joined = try cli.run(["--cache-dir=\(folder)", "stats"], withCacheDirectory: false)
        #expect(joined.stdout.contains("pages:   1"), "\(joined.stdout)")
        // A command's own option before the command word, and an option's value that is a
        // command's name: a folder called "list", never the command.
        let offline = try cli.run(["--offline", "fetch", page])
        #expect(offline.status == 0, "\(offline.stderr)")
        #expect(offline.stdout.contains("cached"))
        let other = cacheURL.deletingLastPathComponent().appending(path: "list").path(percentEncoded: false)
        let named = try cli.run(["--cache-dir", other, "stats"], withCacheDirectory: false)
        #expect(named.status == 0, "\(named.stderr)")
        #expect(named.stdout.contains("pages:   0"), "\(named.stdout)")
        let help = try cli.run(["--cache-dir", folder, "--help"], withCacheDirectory: false)
        #expect(help.status == 0 && help.stdout.contains("Commands:"))
        expectOneLineError(
            try cli.run(["--cache-dir", folder], withCacheDirectory: false), containing: "no command", status: 2)
        expectOneLineError(try cli.run(["--bogus", "list"]), containing: "unknown option '--bogus'", status: 2)
    }

    @Test func aTimeoutSaysSo() throws {
        let server = try TestHTTPServer()
        server.setPage("/slow.html", .init(NotesOfflineEndToEndTests.note("Slow", "late"), latency: .seconds(5)))
        let result = try cli.run(["fetch", server.url("/slow.html").absoluteString, "--timeout", "1"])
        expectOneLineError(result, containing: "timed out after 1 s")
    }

    @Test func ctrlCCancelsRequestsInFlightAtOnceAndKeepsWhatIsCached() throws {
        let server = try TestHTTPServer()
        var links = ""
        for i in 1...4 {
            server.setPage(
                "/s\(i).html", .init(NotesOfflineEndToEndTests.note("Stalled \(i)", "body"), latency: .seconds(30)))
            links += "<a href=\"s\(i).html\">s</a>"
        }
        server.setPage("/index.html", .init("<html><body>\(links)</body></html>"))
        let running = try cli.start(["sync", server.url("/index.html").absoluteString, "--concurrency", "2"])
        // Wait until two requests are held by the stalled server.
        let deadline = Date().addingTimeInterval(30)
        while server.arrivals(at: "/s1.html") + server.arrivals(at: "/s2.html") < 2 && Date() < deadline {
            usleep(2_000)  // polling the server's state, not synchronising on time
        }
        let pressed = Date()
        kill(running.process.processIdentifier, SIGINT)
        let errors = String(decoding: running.stderr.readDataToEndOfFile(), as: UTF8.self)
        running.process.waitUntilExit()
        let took = Date().timeIntervalSince(pressed)
        print("Ctrl-C during a sync against a stalled server: exited after \(String(format: "%.2f", took)) s")
        #expect(running.process.terminationStatus == 130)
        #expect(took < 2, "took \(took) s")
        #expect(errors.contains("interrupted"))
        #expect(try cli.run(["stats"]).stdout.contains("pages:   1"))  // the index stays cached
    }

    @Test func aSecondCtrlCExitsImmediately() throws {
        let server = try TestHTTPServer()
        server.setPage("/index.html", .init(NotesOfflineEndToEndTests.note("Stalled", "body"), latency: .seconds(30)))
        let running = try cli.start(["sync", server.url("/index.html").absoluteString])
        let deadline = Date().addingTimeInterval(30)
        while server.arrivals(at: "/index.html") < 1 && Date() < deadline { usleep(2_000) }
        let pressed = Date()
        kill(running.process.processIdentifier, SIGINT)
        kill(running.process.processIdentifier, SIGINT)
        running.process.waitUntilExit()
        #expect(running.process.terminationStatus == 130)
        #expect(Date().timeIntervalSince(pressed) < 2)
    }

    /// Runs the CLI on a pseudo-terminal (`script`), feeding `input`; its combined output.
    func runOnATerminal(_ arguments: [String], input: String = "") throws -> String? {
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/script") else { return nil }
        let command = ([CLI.executable.path(percentEncoded: false)] + arguments + ["--cache-dir", cacheURL.path])
            .map { "'\($0)'" }.joined(separator: " ")
        let process = Process()
        process.executableURL = URL(filePath: "/usr/bin/script")
        process.arguments = ["-qec", command, "/dev/null"]
        let stdin = Pipe()
        let stdout = Pipe()
        process.standardInput = stdin
        process.standardOutput = stdout
        process.standardError = stdout
        try process.run()
        stdin.fileHandleForWriting.write(Data(input.utf8))
        try stdin.fileHandleForWriting.close()
        let output = stdout.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return String(decoding: output, as: UTF8.self)
    }

    @Test func onATerminalProgressIsOneLineAndLimitAsks() throws {
        let server = try TestHTTPServer()
        var links = ""
        for i in 1...5 {
            server.setPage(
                "/n\(i).html", .init(NotesOfflineEndToEndTests.note("N\(i)", String(repeating: "n", count: 3000))))
            links += "<a href=\"n\(i).html\">n</a>"
        }
        server.setPage("/index.html", .init("<html><body>\(links)</body></html>"))
        guard let synced = try runOnATerminal(["sync", server.url("/index.html").absoluteString]) else {
            print("skipped onATerminalProgressIsOneLineAndLimitAsks: no script(1) here")
            return
        }
        // Progress redraws one line in place ("\r", erase line), showing what is in flight.
        #expect(synced.contains("\r\u{1B}[2K[0/5] fetching "), "\(synced)")
        for redraw in synced.components(separatedBy: "\u{1B}[2K").dropFirst() where redraw.hasPrefix("[") {
            let line = redraw.prefix { $0 != "\r" && $0 != "\n" && $0 != "\u{1B}" }
            #expect(line.count <= 80, "\(line)")
        }
        #expect(synced.contains("5 new"))
        let declined = try #require(try runOnATerminal(["limit", "4KB"], input: "n\n"))
        #expect(declined.contains("drops") && declined.contains("Continue? [y/N]"))
        #expect(try cli.run(["stats"]).stdout.contains("pages:   6"))
        let accepted = try #require(try runOnATerminal(["limit", "4KB"], input: "y\n"))
        #expect(accepted.contains("dropped"), "\(accepted)")
        #expect(try !cli.run(["stats"]).stdout.contains("pages:   6"))
    }

    @Test func listFitsEightyColumnsUnlessWide() throws {
        let server = try TestHTTPServer()
        let long = "/a/very/long/path/that/goes/on/and/on/to/make/the/url/wide/enough/to/matter"
        server.setPage(
            "\(long)/page.html", .init(NotesOfflineEndToEndTests.note(String(repeating: "Long title ", count: 8), "x")))
        server.setPage("\(long)/other.html", .init(NotesOfflineEndToEndTests.note("Short", "y")))
        let urls = ["page", "other"].map { server.url("\(long)/\($0).html").absoluteString }
        #expect(try cli.run(["fetch"] + urls).status == 0)
        let listed = try cli.run(["list"]).stdout
        for line in listed.split(separator: "\n") { #expect(line.count <= 80, "\(line.count): \(line)") }
        #expect(listed.contains("page.html") && listed.contains("other.html"))
        let wide = try cli.run(["list", "--wide"]).stdout
        #expect(wide.contains(urls[0]))
    }

    @Test(arguments: ["fetch", "sync", "show", "list", "stats", "remove", "clear", "limit", "demo"])
    func everyCommandHasCompleteHelp(command: String) throws {
        let result = try cli.run([command, "--help"])
        #expect(result.status == 0)
        #expect(result.stdout.contains("Usage: notes-offline \(command)"))
        #expect(result.stdout.contains("--cache-dir DIR") && result.stdout.contains("(default: "))
        #expect(result.stdout.contains("Examples:"))
        #expect(try cli.run(["help", command]).stdout == result.stdout)
    }

    @Test func syncHelpNamesEveryOptionAndTheVersionIsPrinted() throws {
        let help = try cli.run(["help", "sync"]).stdout
        for option in ["--concurrency N", "--timeout SECONDS", "--span-hosts", "(default: 4)", "(default: 30)"] {
            #expect(help.contains(option))
        }
        let version = try cli.run(["--version"], withCacheDirectory: false)
        #expect(version.status == 0 && version.stdout.hasPrefix("notes-offline "))
        let general = try cli.run(["--help"], withCacheDirectory: false)
        #expect(general.stdout.contains("Commands:") && general.stdout.contains("Exit status:"))
    }
}
