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
    var cacheURL: URL { directory.appending("cache") }
    var cli: CLI { CLI(cacheDirectory: cacheURL) }

    static func note(_ title: String, _ text: String) -> String {
        "<html><head><title>\(title)</title></head><body><h1>\(title)</h1><p>\(text)</p></body></html>"
    }

    /// Every file under the cache folder and its bytes.
    func contentsOfTheCache() throws -> [String: Data] {
        var files: [String: Data] = [:]
        let root = cacheURL.path(percentEncoded: false)
        guard let enumerator = FileManager.default.enumerator(atPath: root) else { return files }
        for case let name as String in enumerator {
            var isDirectory: ObjCBool = false
            _ = FileManager.default.fileExists(atPath: root + "/" + name, isDirectory: &isDirectory)
            files[name] = isDirectory.boolValue ? Data() : try Data(contentsOf: URL(filePath: root + "/" + name))
        }
        return files
    }

    @Test func fetchedPagesShowOfflineAfterTheServerStops() throws {
        let server = try TestHTTPServer()
        server.setPage("/a.html", .init(Self.note("Alpha", "first note &amp; more"), etag: "\"a1\""))
        server.setPage("/b.txt", .init("# Not a title\nplain text", contentType: "text/plain"))
        let fetched = try cli.run(["fetch", server.url("/a.html").absoluteString, server.url("/b.txt").absoluteString])
        #expect(fetched.status == 0, "\(fetched.stderr)")
        #expect(fetched.stdout.contains("new") && fetched.stdout.contains("Alpha"))
        // Titles come from an HTML page's <title> only; a text page is named by its file.
        #expect(fetched.stdout.contains("b.txt"))
        server.stop()

        let shown = try cli.run(["show", server.url("/a.html").absoluteString])
        #expect(shown.status == 0, "\(shown.stderr)")
        #expect(shown.stdout.contains("# Alpha"))
        #expect(shown.stdout.contains("first note & more"))
        let raw = try cli.run(["show", "--raw", server.url("/a.html").absoluteString])
        #expect(raw.stdout == Self.note("Alpha", "first note &amp; more"))
        let offline = try cli.run(["fetch", "--offline", server.url("/b.txt").absoluteString])
        #expect(offline.status == 0)
        #expect(offline.stdout.contains("cached"))

        let listed = try cli.run(["list"])
        #expect(listed.stdout.contains("PAGE") && listed.stdout.contains("TITLE") && listed.stdout.contains("AGE"))
        #expect(listed.stdout.contains("a.html") && listed.stdout.contains("Alpha"))
        let stats = try cli.run(["stats"])
        #expect(stats.stdout.contains("pages:   2"))
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
        #expect(changed.stdout.contains("updated"))
        #expect(try cli.run(["show", urls[0]]).stdout.contains("version two"))
    }

    @Test func syncCountsNewUpdatedUnchangedSkippedAndFailedPages() throws {
        let server = try TestHTTPServer()
        var links = ""
        for i in 1...4 {
            server.setPage("/notes/n\(i).html", .init(Self.note("Note \(i)", "text"), etag: "\"\(i)\""))
            links += "<a href=\"notes/n\(i).html\">n\(i)</a> <a href='/notes/n\(i).html#top'>again</a> "
        }
        server.setPage("/notes/paper.pdf", .init("%PDF-1.4", contentType: "application/pdf"))
        server.setPage("/notes/data", .init("{}", contentType: "image/png"))
        server.setPage("/notes/gone.html", .init("missing", status: 404))
        server.setPage("/notes/boom.html", .init("boom", status: 500))
        links += "<a href=\"notes/paper.pdf\">pdf</a> <a href=\"notes/data\">img</a> "
        links += "<a href=\"notes/gone.html\">404</a> <a href=\"notes/boom.html\">500</a> "
        links += "<a href=\"https://elsewhere.example/x.html\">other host</a>"
        server.setPage("/index.html", .init("<html><title>Index</title><body>\(links)</body></html>"))
        let index = server.url("/index.html").absoluteString

        let first = try cli.run(["sync", index, "--concurrency", "3"])
        // 404 and 500 are reported and counted, but the index was fetched: exit 0.
        #expect(first.status == 0, "\(first.stderr)")
        #expect(first.stdout.contains("synced index.html: 4 new, 0 updated, 0 unchanged, 2 skipped, 2 failed"))
        #expect(first.stdout.contains("5 pages cached: the index and 4 linked pages"))
        #expect(first.stderr.contains("skipped paper.pdf") || first.stderr.contains("skipped notes/paper.pdf"))
        #expect(first.stderr.contains("HTTP 404") && first.stderr.contains("HTTP 500"))
        #expect(server.requests(to: "/notes/paper.pdf").isEmpty)  // skipped by its extension, never fetched
        #expect(!first.stdout.contains("\u{1B}") && !first.stderr.contains("\u{1B}"))  // no control codes in a pipe

        server.setPage("/notes/n1.html", .init(Self.note("Note 1", "changed"), etag: "\"1b\""))
        let second = try cli.run(["sync", index])
        #expect(second.stdout.contains("0 new, 1 updated, 3 unchanged, 2 skipped, 2 failed"))
        #expect(try cli.run(["stats"]).stdout.contains("pages:   5"))
    }

    @Test func syncExitsWith1WhenEveryPageFailsOrTheIndexDoes() throws {
        let server = try TestHTTPServer()
        server.setPage("/bad.html", .init("boom", status: 500))
        server.setPage("/index.html", .init("<a href=\"bad.html\">x</a>"))
        #expect(try cli.run(["sync", server.url("/index.html").absoluteString]).status == 1)
        expectOneLineError(try cli.run(["sync", server.url("/nothing.html").absoluteString]), containing: "HTTP 404")
    }

    @Test func aSmallLimitIsReportedNotHidden() throws {
        let server = try TestHTTPServer()
        var links = ""
        for i in 1...6 {
            server.setPage("/p\(i).html", .init(Self.note("P\(i)", String(repeating: "x", count: 3000))))
            links += "<a href=\"p\(i).html\">p</a>"
        }
        server.setPage("/index.html", .init("<html><body>\(links)</body></html>"))
        #expect(try cli.run(["limit", "8KB", "--yes"]).status == 0)
        let result = try cli.run(["sync", server.url("/index.html").absoluteString])
        #expect(result.stdout.contains("6 new"))
        #expect(result.stdout.contains("the limit (8.0 KiB) holds"))
        #expect(result.stdout.contains("raise it with 'notes-offline limit SIZE'"))
    }

    @Test func readCommandsNeverChangeTheCache() throws {
        let server = try TestHTTPServer()
        server.setPage("/a.html", .init(Self.note("A", String(repeating: "a", count: 2000))))
        server.setPage("/b.html", .init(Self.note("B", String(repeating: "b", count: 2000))))
        #expect(
            try cli.run(["fetch", server.url("/a.html").absoluteString, server.url("/b.html").absoluteString]).status
                == 0)
        let before = try contentsOfTheCache()
        for command in [
            ["show", server.url("/a.html").absoluteString], ["show", "--raw", server.url("/b.html").absoluteString],
            ["show", server.url("/missing.html").absoluteString], ["list"], ["list", "--wide"], ["stats"], ["limit"],
            ["fetch", "--offline", server.url("/a.html").absoluteString],
        ] {
            _ = try cli.run(command)
            #expect(try contentsOfTheCache() == before, "\(command) changed the cache")
        }
        // The old --max-size, which evicted on any command, is a usage error now.
        expectOneLineError(
            try cli.run(["show", server.url("/a.html").absoluteString, "--max-size", "1KB"]),
            containing: "notes-offline limit", status: 2)
        #expect(try contentsOfTheCache() == before)
    }

    @Test func readCommandsOnAFreshHomeCreateNothing() throws {
        let home = directory.appending("home")
        try FileManager.default.createDirectory(at: home, withIntermediateDirectories: true)
        let root = home.appending(path: ".cache/notes-offline")
        let fresh = CLI(cacheDirectory: root)
        #expect(try fresh.run(["stats"]).stdout.contains("pages:   0"))
        #expect(try fresh.run(["list"]).stdout.contains("no pages cached"))
        #expect(try FileManager.default.contentsOfDirectory(atPath: home.path(percentEncoded: false)) == [])
    }

    @Test func loweringTheLimitAsksFirstAndSaysWhatItDrops() throws {
        let server = try TestHTTPServer()
        for name in ["a", "b", "c"] {
            server.setPage("/\(name).html", .init(Self.note(name, String(repeating: name, count: 3000))))
            #expect(try cli.run(["fetch", server.url("/\(name).html").absoluteString]).status == 0)
        }
        // The limit bounds the directory: pages of 3 KB leave room for one in 10 KB, whose
        // other two fifths and more are the journal and the room to compact in.
        let refused = try cli.run(["limit", "10KB"])  // not a terminal: no question, no eviction
        expectOneLineError(refused, containing: "drops 2 of 3 pages; run it again with --yes")
        #expect(try cli.run(["stats"]).stdout.contains("pages:   3"))
        let lowered = try cli.run(["limit", "10KB", "--yes"])
        #expect(lowered.status == 0)
        #expect(lowered.stdout.contains("dropped 2 pages"))
        let stats = try cli.run(["stats"]).stdout
        #expect(stats.contains("pages:   1") && stats.contains("of 10.0 KiB"))
        #expect(try cli.run(["list"]).stdout.contains("c.html"))  // the most recently used stays
    }

    @Test func theCacheDirectoryMustBeEmptyNewOrOurs() throws {
        let userFolder = directory.appending("user")
        try FileManager.default.createDirectory(
            at: userFolder.appending(path: "pages"), withIntermediateDirectories: true)
        for name in ["journal", "photo.jpg", "notes.txt"] {
            try Data("mine".utf8).write(to: userFolder.appending(path: "pages/\(name)"))
        }
        try Data("mine".utf8).write(to: userFolder.appending(path: "index.html"))
        for command in [["list"], ["stats"], ["clear"], ["fetch", "http://127.0.0.1:9/x.html"]] {
            let result = try CLI(cacheDirectory: userFolder).run(command)
            expectOneLineError(result, containing: "is not a notes-offline cache and not empty")
        }
        #expect(try Data(contentsOf: userFolder.appending(path: "pages/journal")) == Data("mine".utf8))
        #expect(
            try FileManager.default.contentsOfDirectory(atPath: userFolder.appending(path: "pages").path).sorted() == [
                "journal", "notes.txt", "photo.jpg",
            ])
        expectOneLineError(
            try cli.run(["list", "--cache-dir", ""], withCacheDirectory: false), containing: "--cache-dir",
            status: 2)
    }

    @Test func removeTakesSeveralURLsAndClearEverything() throws {
        let server = try TestHTTPServer()
        for name in ["a", "b", "c"] { server.setPage("/\(name).html", .init(Self.note(name.uppercased(), name))) }
        let urls = ["a", "b", "c"].map { server.url("/\($0).html").absoluteString }
        #expect(try cli.run(["fetch"] + urls).status == 0)
        let removed = try cli.run(["remove", urls[0], urls[1]])
        #expect(removed.status == 0)
        #expect(removed.stdout.components(separatedBy: "removed").count == 3)
        #expect(try cli.run(["stats"]).stdout.contains("pages:   1"))
        expectOneLineError(try cli.run(["remove", urls[0]]), containing: "is not cached")
        let cleared = try cli.run(["clear"])
        #expect(cleared.stdout.contains("removed 1 pages"))
        #expect(try cli.run(["list"]).stdout.contains("no pages cached"))
    }

    @Test func urlsAreFoundHoweverTheyAreWritten() throws {
        let server = try TestHTTPServer()
        server.setPage("/notes/a.html", .init(Self.note("Alpha", "text")))
        let url = server.url("/notes/a.html")
        #expect(try cli.run(["fetch", url.absoluteString]).status == 0)
        let port = url.port ?? 80
        for written in [
            "http://127.0.0.1:\(port)/notes/a.html#section", "HTTP://127.0.0.1:\(port)/notes/a.html",
            "http://127.0.0.1:\(port)/notes/./a.html", "http://127.0.0.1:\(port)/other/../notes/a.html",
        ] {
            let shown = try cli.run(["show", written])
            #expect(shown.status == 0, "\(written): \(shown.stderr)")
            #expect(shown.stdout.contains("# Alpha"))
        }
        #expect(try cli.run(["remove", "http://127.0.0.1:\(port)/notes/./a.html#x"]).status == 0)
    }

    @Test func charsetsAndEntitiesAreDecoded() throws {
        let server = try TestHTTPServer()
        // "café – naïve" in Latin-1, declared in the header; and one declared only in a <meta>.
        var latin1 = Data("<html><head><title>caf".utf8)
        latin1.append(0xE9)
        latin1.append(contentsOf: Data("</title></head><body>na".utf8))
        latin1.append(0xEF)
        latin1.append(contentsOf: Data("ve</body></html>".utf8))
        server.setPage("/latin1.html", bytes: latin1, contentType: "text/html; charset=iso-8859-1")
        var meta = Data("<html><head><meta charset=\"iso-8859-1\"><title>meta</title></head><body>".utf8)
        meta.append(0xFC)
        meta.append(contentsOf: Data("ber</body></html>".utf8))
        server.setPage("/meta.html", bytes: meta, contentType: "text/html")
        server.setPage(
            "/entities.html",
            .init(Self.note("Entities", "&eacute;t&eacute; &mdash; &#233;&#x2014;&hearts; &amp;c &zzz; AT&T &notit;")))
        for path in ["/latin1.html", "/meta.html", "/entities.html"] {
            let result = try cli.run(["fetch", server.url(path).absoluteString])
            #expect(result.status == 0, "\(path): \(result.stderr)")
        }
        #expect(try cli.run(["show", server.url("/latin1.html").absoluteString]).stdout.contains("# café"))
        #expect(try cli.run(["show", server.url("/latin1.html").absoluteString]).stdout.contains("naïve"))
        #expect(try cli.run(["show", server.url("/meta.html").absoluteString]).stdout.contains("über"))
        let entities = try cli.run(["show", server.url("/entities.html").absoluteString]).stdout
        // An unknown name stays as written; a legacy name without `;` is read as browsers read it.
        #expect(entities.contains("été — é—♥ &c &zzz; AT&T ¬it;"), "\(entities)")
    }

    @Test func redirectsToAnotherHostAreNotFollowedUnlessAsked() throws {
        let server = try TestHTTPServer()
        let other = try TestHTTPServer()
        other.setPage("/there.html", .init(Self.note("There", "elsewhere")))
        server.setPage("/moved.html", .init("", status: 301, headers: ["Location": "/here.html"]))
        server.setPage("/here.html", .init(Self.note("Here", "same host")))
        // Another port of 127.0.0.1 is the same host name; name the other host 'localhost'.
        let away = other.url("/there.html").absoluteString.replacingOccurrences(of: "127.0.0.1", with: "localhost")
        server.setPage("/away.html", .init("", status: 302, headers: ["Location": away]))
        let same = try cli.run(["fetch", server.url("/moved.html").absoluteString])
        #expect(same.status == 0, "\(same.stderr)")
        #expect(same.stdout.contains("Here"))
        let refused = try cli.run(["fetch", server.url("/away.html").absoluteString])
        #expect(refused.stderr.contains("redirects to another host"))
        #expect(other.requests(to: "/there.html").isEmpty)
        let followed = try cli.run(["fetch", "--span-hosts", server.url("/away.html").absoluteString])
        #expect(followed.stdout.contains("There"), "\(followed.stderr)")
    }

    @Test func readCommandsWorkWhileASyncWrites() throws {
        let server = try TestHTTPServer()
        server.setPage("/a.html", .init(Self.note("Alpha", "text")))
        #expect(try cli.run(["fetch", server.url("/a.html").absoluteString]).status == 0)
        server.setPage("/slow.html", .init(Self.note("Slow", "late"), latency: .seconds(30)))
        server.setPage("/index.html", .init("<a href=\"slow.html\">slow</a>"))
        let running = try cli.start(["sync", server.url("/index.html").absoluteString])
        let deadline = Date().addingTimeInterval(30)
        while server.arrivals(at: "/slow.html") < 1 && Date() < deadline { usleep(2_000) }
        // The sync holds the cache open for writing; readers neither wait nor fail.
        let listed = try cli.run(["list"])
        #expect(listed.status == 0, "\(listed.stderr)")
        #expect(listed.stdout.contains("a.html"))
        #expect(try cli.run(["show", server.url("/a.html").absoluteString]).stdout.contains("# Alpha"))
        #expect(try cli.run(["stats"]).status == 0)
        // A second writer writes beside it (the library shares its cache between writers).
        server.setPage("/b.html", .init(Self.note("Beta", "more")))
        let fetched = try cli.run(["fetch", server.url("/b.html").absoluteString])
        #expect(fetched.status == 0, "\(fetched.stderr)")
        #expect(try cli.run(["show", server.url("/b.html").absoluteString]).stdout.contains("# Beta"))
        kill(running.process.processIdentifier, SIGINT)
        running.process.waitUntilExit()
        // What both wrote is there once the sync is gone.
        let afterwards = try cli.run(["list"]).stdout
        #expect(afterwards.contains("a.html") && afterwards.contains("b.html"), "\(afterwards)")
    }

    @Test func aLibraryOfAnEarlierVersionKeepsOneWriterAtATime() throws {
        let server = try TestHTTPServer()
        server.setPage("/a.html", .init(Self.note("Alpha", "text")))
        #expect(try cli.run(["fetch", server.url("/a.html").absoluteString]).status == 0)
        // The marker as an earlier version wrote it: no `sharesWriters`.
        let marker = cacheURL.appending(path: "notes-offline.json")
        var settings = try JSONSerialization.jsonObject(with: Data(contentsOf: marker)) as? [String: Any] ?? [:]
        #expect(settings.removeValue(forKey: "sharesWriters") as? Bool == true)
        try JSONSerialization.data(withJSONObject: settings).write(to: marker)
        server.setPage("/slow.html", .init(Self.note("Slow", "late"), latency: .seconds(30)))
        server.setPage("/index.html", .init("<a href=\"slow.html\">slow</a>"))
        let running = try cli.start(["sync", server.url("/index.html").absoluteString])
        let deadline = Date().addingTimeInterval(30)
        while server.arrivals(at: "/slow.html") < 1 && Date() < deadline { usleep(2_000) }
        // A second writer is refused with a clear message; readers still read.
        expectOneLineError(try cli.run(["clear"]), containing: "in use by another notes-offline")
        #expect(try cli.run(["list"]).stdout.contains("a.html"))
        kill(running.process.processIdentifier, SIGINT)
        running.process.waitUntilExit()
    }

    @Test func aCacheNobodyCanWriteCanBeRead() throws {
        func mount(_ arguments: [String]) throws -> Int32 {
            let process = Process()
            process.executableURL = URL(filePath: "/usr/bin/env")
            process.arguments = arguments
            process.standardOutput = FileHandle.nullDevice
            process.standardError = FileHandle.nullDevice
            try process.run()
            process.waitUntilExit()
            return process.terminationStatus
        }
        let mountPoint = directory.appending("mnt")
        try FileManager.default.createDirectory(at: mountPoint, withIntermediateDirectories: true)
        guard try mount(["mount", "-t", "tmpfs", "-o", "size=8m", "tmpfs", mountPoint.path]) == 0 else {
            print("skipped aCacheNobodyCanWriteCanBeRead: cannot mount a tmpfs here")
            return
        }
        defer { _ = try? mount(["umount", mountPoint.path]) }
        let archived = CLI(cacheDirectory: mountPoint.appending(path: "cache"))
        let server = try TestHTTPServer()
        server.setPage("/a.html", .init(Self.note("Archived", "kept")))
        #expect(try archived.run(["fetch", server.url("/a.html").absoluteString]).status == 0)
        #expect(try mount(["mount", "-o", "remount,ro", mountPoint.path]) == 0)
        #expect(try archived.run(["list"]).stdout.contains("a.html"))
        #expect(try archived.run(["show", server.url("/a.html").absoluteString]).stdout.contains("# Archived"))
        #expect(try archived.run(["stats"]).stdout.contains("pages:   1"))
    }

    @Test func aDamagedJournalIsReportedNotSilentlyEmptied() throws {
        let server = try TestHTTPServer()
        server.setPage("/a.html", .init(Self.note("Alpha", "text")))
        #expect(try cli.run(["fetch", server.url("/a.html").absoluteString]).status == 0)
        let journal = cacheURL.appending(path: "pages/journal")
        var bytes = try Data(contentsOf: journal)
        bytes.append(contentsOf: Data("BOGUS LINE\n".utf8))
        try bytes.write(to: journal)
        let result = try cli.run(["fetch", server.url("/a.html").absoluteString])
        #expect(result.stderr.contains("journal was damaged (1 line skipped); 0 pages dropped"), "\(result.stderr)")
        // The page the damage did not touch is still cached.
        let offline = try cli.run(["show", server.url("/a.html").absoluteString])
        #expect(offline.status == 0 && offline.stdout.contains("Alpha"), "\(offline.stderr)")
    }
}
