import Foundation
import SwiftyCacheCore
import SwiftyCacheTestSupport
import Testing

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The built `notes-offline` against a real HTTP server on 127.0.0.1.
@Suite struct NotesOfflineEndToEndTests {
    let directory = TemporaryDirectory()
    var cli: CLI { CLI(cacheDirectory: directory.appending("cache")) }

    static func note(_ title: String, _ text: String) -> String {
        "<html><head><title>\(title)</title></head><body><h1>\(title)</h1><p>\(text)</p></body></html>"
    }

    @Test func fetchedPagesShowOfflineAfterTheServerStops() throws {
        let server = try TestHTTPServer()
        server.setPage("/a.html", .init(Self.note("Alpha", "first note &amp; more"), etag: "\"a1\""))
        server.setPage("/b.html", .init("# Beta heading\nplain text", contentType: "text/plain"))
        let fetched = try cli.run(["fetch", server.url("/a.html").absoluteString, server.url("/b.html").absoluteString])
        #expect(fetched.status == 0, "\(fetched.stderr)")
        #expect(fetched.stdout.contains("Alpha"))
        #expect(fetched.stdout.contains("Beta heading"))
        server.stop()

        let shown = try cli.run(["show", server.url("/a.html").absoluteString])
        #expect(shown.status == 0, "\(shown.stderr)")
        #expect(shown.stdout.contains("# Alpha"))
        #expect(shown.stdout.contains("first note & more"))
        let raw = try cli.run(["show", "--raw", server.url("/a.html").absoluteString])
        #expect(raw.stdout == Self.note("Alpha", "first note &amp; more"))
        let offline = try cli.run(["fetch", "--offline", server.url("/b.html").absoluteString])
        #expect(offline.status == 0)
        #expect(offline.stdout.contains("cached"))

        let listed = try cli.run(["list"])
        #expect(listed.stdout.contains("URL") && listed.stdout.contains("TITLE") && listed.stdout.contains("AGE"))
        #expect(listed.stdout.contains("/a.html") && listed.stdout.contains("Beta heading"))
        let stats = try cli.run(["stats"])
        #expect(stats.stdout.contains("entries: 2"))
        #expect(stats.stdout.contains("hits:    2"))
        #expect(stats.stdout.contains("of 50.0 MiB"))
    }

    @Test func refetchSendsValidatorsAndA304KeepsTheCachedCopy() throws {
        let server = try TestHTTPServer()
        server.setPage("/e.html", .init(Self.note("ETagged", "version one"), etag: "\"v1\""))
        server.setPage("/m.html", .init(Self.note("Dated", "old"), lastModified: "Wed, 21 Oct 2015 07:28:00 GMT"))
        let urls = [server.url("/e.html").absoluteString, server.url("/m.html").absoluteString]
        #expect(try cli.run(["fetch"] + urls).status == 0)

        let again = try cli.run(["fetch"] + urls)
        #expect(again.status == 0, "\(again.stderr)")
        #expect(again.stdout.components(separatedBy: "unchanged").count == 3)
        #expect(server.requests(to: "/e.html").last?.headers["if-none-match"] == "\"v1\"")
        #expect(server.requests(to: "/e.html").last?.status == 304)
        #expect(server.requests(to: "/m.html").last?.headers["if-modified-since"] == "Wed, 21 Oct 2015 07:28:00 GMT")
        #expect(server.requests(to: "/m.html").last?.status == 304)

        server.setPage("/e.html", .init(Self.note("ETagged", "version two"), etag: "\"v2\""))
        let changed = try cli.run(["fetch", urls[0]])
        #expect(changed.stdout.contains("fetched"))
        #expect(server.requests(to: "/e.html").last?.status == 200)
        #expect(try cli.run(["show", urls[0]]).stdout.contains("version two"))
    }

    @Test func syncFollowsSameHostLinksOfTheIndex() throws {
        let server = try TestHTTPServer()
        var links = ""
        for i in 1...6 {
            server.setPage(
                "/notes/n\(i).html", .init(Self.note("Note \(i)", String(repeating: "text ", count: 200 * i))))
            links += "<a href=\"notes/n\(i).html\">n\(i)</a> <a href='/notes/n\(i).html#top'>again</a> "
        }
        links += "<a href=\"https://elsewhere.example/x.html\">other host</a>"
        server.setPage("/index.html", .init("<html><title>Index</title><body>\(links)</body></html>"))
        let result = try cli.run(["sync", server.url("/index.html").absoluteString, "--concurrency", "3"])
        #expect(result.status == 0, "\(result.stderr)")
        // Not a terminal: one plain log line per page.
        let progress = result.stdout.split(separator: "\n").filter { $0.hasPrefix("[") }
        #expect(progress.count == 6)
        #expect(progress.contains { $0.hasPrefix("[6/6] notes/") && $0.contains("KiB") })
        #expect(result.stdout.contains("synced 6 of 6 pages"))
        #expect(try cli.run(["stats"]).stdout.contains("entries: 7"))
        for i in 1...6 { #expect(server.requests(to: "/notes/n\(i).html").count == 1) }
    }

    @Test func interruptingASyncKeepsThePagesAlreadyCached() throws {
        let server = try TestHTTPServer()
        var links = ""
        for i in 1...8 {
            server.setPage("/s\(i).html", .init(Self.note("Slow \(i)", "body"), latency: .milliseconds(250)))
            links += "<a href=\"s\(i).html\">s</a>"
        }
        server.setPage("/index.html", .init("<html><body>\(links)</body></html>"))
        let running = try cli.start(["sync", server.url("/index.html").absoluteString, "--concurrency", "1"])
        // Wait for the first page to be reported, then press Ctrl-C.
        var seen = ""
        while !seen.contains("[1/8]") {
            let data = running.stdout.availableData
            if data.isEmpty { break }
            seen += String(decoding: data, as: UTF8.self)
        }
        kill(running.process.processIdentifier, SIGINT)
        let rest = running.stdout.readDataToEndOfFile()
        let errors = String(decoding: running.stderr.readDataToEndOfFile(), as: UTF8.self)
        running.process.waitUntilExit()
        #expect(running.process.terminationStatus == 130)
        #expect(errors.contains("interrupted"))
        let reported = (seen + String(decoding: rest, as: UTF8.self)).split(separator: "\n").filter {
            $0.hasPrefix("[")
        }.count
        #expect(reported >= 1 && reported < 8)
        server.stop()
        let stats = try cli.run(["stats"])
        #expect(stats.stdout.contains("entries: \(reported + 1)"), "\(stats.stdout)")
    }

    @Test func httpErrorsKeepAndNameTheCachedCopy() throws {
        let server = try TestHTTPServer()
        server.setPage("/gone.html", .init(Self.note("Gone", "still here")))
        #expect(try cli.run(["fetch", server.url("/gone.html").absoluteString]).status == 0)
        server.setPage("/gone.html", .init("missing", status: 404))
        let missing = try cli.run(["fetch", server.url("/gone.html").absoluteString])
        expectOneLineError(missing, containing: "HTTP 404")
        #expect(missing.stderr.contains("cached copy from"))
        #expect(try cli.run(["show", server.url("/gone.html").absoluteString]).stdout.contains("still here"))

        server.setPage("/boom.html", .init("boom", status: 500))
        expectOneLineError(try cli.run(["fetch", server.url("/boom.html").absoluteString]), containing: "HTTP 500")
        server.setPage("/image.png", .init("\u{89}PNG", contentType: "image/png"))
        expectOneLineError(
            try cli.run(["fetch", server.url("/image.png").absoluteString]), containing: "not a text page")
    }

    @Test func unreachableHostIsOneClearLine() throws {
        let server = try TestHTTPServer()
        let url = server.url("/x.html").absoluteString
        server.stop()  // nothing listens on that port any more
        expectOneLineError(try cli.run(["fetch", url]), containing: "cannot reach 127.0.0.1")
    }

    @Test func usageMistakesExitWithStatus2() throws {
        expectOneLineError(try cli.run(["frobnicate"]), containing: "unknown command 'frobnicate'", status: 2)
        expectOneLineError(try cli.run(["list", "--bogus"]), containing: "unknown option '--bogus'", status: 2)
        expectOneLineError(try cli.run(["fetch"]), containing: "fetch needs at least one URL", status: 2)
        expectOneLineError(try cli.run(["list", "--max-size", "lots"]), containing: "--max-size", status: 2)
        expectOneLineError(try cli.run(["fetch", "ftp://example.com/a"]), containing: "invalid URL")
        expectOneLineError(try cli.run(["fetch", "not a url"]), containing: "invalid URL")
    }

    @Test func offlineMissesAndUnknownPagesAreErrors() throws {
        expectOneLineError(try cli.run(["show", "http://127.0.0.1:9/none.html"]), containing: "is not cached")
        expectOneLineError(
            try cli.run(["fetch", "--offline", "http://127.0.0.1:9/none.html"]),
            containing: "--offline forbids the network")
        expectOneLineError(try cli.run(["remove", "http://127.0.0.1:9/none.html"]), containing: "is not cached")
    }

    @Test func cacheDirectoryThatCannotBeCreatedIsAnError() throws {
        let blocker = directory.appending("file")
        try Data("x".utf8).write(to: blocker)
        let result = try CLI(cacheDirectory: blocker.appending(path: "cache")).run(["list"])
        expectOneLineError(result, containing: "cannot open the cache")
    }

    @Test func cacheLockedByAnotherRunningInstanceIsAnError() throws {
        let pages = directory.appending("cache/pages")
        let holder = try DiskLRUCache(directory: pages, appVersion: 1, valueCount: 2, maxSize: 1 << 20)
        defer { try? holder.close() }
        expectOneLineError(try cli.run(["list"]), containing: "in use by another notes-offline")
    }

    @Test func pageLargerThanTheCacheIsRefused() throws {
        let server = try TestHTTPServer()
        server.setPage("/big.html", .init(String(repeating: "x", count: 4096)))
        let result = try cli.run(["fetch", server.url("/big.html").absoluteString, "--max-size", "1KB"])
        expectOneLineError(result, containing: "larger than the cache limit")
    }

    @Test func removeAndClear() throws {
        let server = try TestHTTPServer()
        server.setPage("/a.html", .init(Self.note("A", "a")))
        server.setPage("/b.html", .init(Self.note("B", "b")))
        #expect(
            try cli.run(["fetch", server.url("/a.html").absoluteString, server.url("/b.html").absoluteString]).status
                == 0)
        #expect(try cli.run(["remove", server.url("/a.html").absoluteString]).status == 0)
        #expect(try cli.run(["stats"]).stdout.contains("entries: 1"))
        let cleared = try cli.run(["clear"])
        #expect(cleared.stdout.contains("removed 1 pages"))
        #expect(try cli.run(["list"]).stdout.contains("no pages cached"))
    }

    @Test(arguments: ["fetch", "sync", "show", "list", "stats", "remove", "clear", "demo"])
    func everyCommandHasHelp(command: String) throws {
        let result = try cli.run([command, "--help"])
        #expect(result.status == 0)
        #expect(result.stdout.contains("Usage: notes-offline \(command)"))
        #expect(result.stdout.contains("--cache-dir"))
    }

    @Test func demoRunsTheWholeFlowWithNoNetwork() throws {
        let result = try cli.run(["demo"])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.contains("synced 5 of 5 pages"))
        #expect(result.stdout.contains("== show"))
        #expect(result.stdout.contains("The append-only journal"))
        #expect(result.stdout.contains("entries: 6"))
        // A second run finds everything unchanged.
        #expect(try cli.run(["demo"]).stdout.contains("(unchanged)"))
        let help = try cli.run(["--help"], withCacheDirectory: false)
        #expect(help.status == 0 && help.stdout.contains("Commands:"))
    }
}
