import Foundation
import SwiftyCacheCore
import SwiftyCacheTestSupport
import Testing

/// What notes-offline keeps and how it reads it: the links `sync` follows, fetch-through with
/// `--max-age`, and caches an earlier version of notes-offline wrote (its `Page` type since
/// changed: read through a migration).
@Suite struct NotesOfflineCacheTests {
    let directory = TemporaryDirectory()
    var cacheURL: URL { directory.appending("cache") }
    var cli: CLI { CLI(cacheDirectory: cacheURL) }

    @Test func syncFollowsTheLinksAReaderFollowsNotStylesheets() throws {
        let server = try TestHTTPServer()
        for name in ["a", "b", "c", "d", "e"] {
            server.setPage("/book/\(name).html", .init(NotesOfflineEndToEndTests.note("Page \(name)", "text")))
        }
        server.setPage("/book/css/chrome-ae938929.css", .init("body {}", contentType: "text/css"))
        // As an mdBook writes its pages: stylesheets and icons in <link>, pages in <a>.
        server.setPage(
            "/book/index.html",
            .init(
                """
                <html><head><title>Book</title>
                <link rel="stylesheet" href="css/chrome-ae938929.css">
                <link rel="alternate" hreflang="fr" href="d.html">
                <base href="/book/">
                </head><body>
                <a class="chapter" href="a.html">A</a> <A HREF='b.html'>B</A>
                <map><area shape="rect" coords="0,0,1,1" href="c.html"></map>
                <a data-href="d.html" hreflang="en" href="e.html#part">E</a> <div data-href="d.html">no</div>
                </body></html>
                """))
        let synced = try cli.run(["sync", server.url("/book/index.html").absoluteString])
        #expect(synced.status == 0, "\(synced.stderr)")
        #expect(synced.stdout.contains("synced index.html: 4 new, 0 updated, 0 unchanged, 0 skipped, 0 failed"))
        #expect(server.requests(to: "/book/css/chrome-ae938929.css").isEmpty)
        #expect(server.requests(to: "/book/d.html").isEmpty)
        let listed = try cli.run(["list"])
        #expect(!listed.stdout.contains("css"))
        for name in ["a", "b", "c", "e"] { #expect(listed.stdout.contains("\(name).html"), "\(name).html") }
    }

    @Test func syncWithAMaxAgeLeavesFreshPagesAlone() throws {
        let server = try TestHTTPServer()
        server.setPage("/n.html", .init(NotesOfflineEndToEndTests.note("Note", "text"), etag: "\"1\""))
        server.setPage("/index.html", .init("<html><title>Index</title><body><a href=\"n.html\">n</a></body></html>"))
        let index = server.url("/index.html").absoluteString
        #expect(try cli.run(["sync", index]).status == 0)
        #expect(server.requests(to: "/n.html").count == 1)
        let fresh = try cli.run(["sync", index, "--max-age", "3600"])
        #expect(fresh.status == 0, "\(fresh.stderr)")
        #expect(fresh.stdout.contains("0 new, 0 updated, 1 unchanged"))
        #expect(server.requests(to: "/n.html").count == 1)
        #expect(server.requests(to: "/index.html").count == 1)
        // Without it, every page is asked again (a conditional request: 304, unchanged).
        #expect(try cli.run(["sync", index]).stdout.contains("0 new, 0 updated, 1 unchanged"))
        #expect(server.requests(to: "/n.html").count == 2)
        #expect(try cli.run(["sync", index, "--max-age", "-1"]).status != 0)
    }

    /// A cache the release before this one wrote (`Tests/Fixtures/release-393bff7/notes-offline`,
    /// a sync of the sample notes served on 127.0.0.1:8765) opens: read-only commands read its
    /// pages through the migration, and a writing command moves it to the current version
    /// with every page kept.
    @Test func aCacheThePreviousReleaseWroteReadsThroughTheMigration() throws {
        let fixture = URL(filePath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .appending(path: "Fixtures/release-393bff7/notes-offline", directoryHint: .isDirectory)
        try FileManager.default.createDirectory(at: directory.url, withIntermediateDirectories: true)
        try FileManager.default.copyItem(at: fixture, to: cacheURL)
        let page = "http://127.0.0.1:8765/notes/fsync.html"

        let listed = try cli.run(["list"])
        #expect(listed.status == 0, "\(listed.stderr)")
        #expect(listed.stdout.contains("When to pay for fsync"))
        #expect(listed.stdout.contains("notes/journal.html"))
        let shown = try cli.run(["show", page])
        #expect(shown.status == 0, "\(shown.stderr)")
        #expect(shown.stdout.contains("When to pay for fsync"))

        // A writer opens it: the pages are kept, now in the current version.
        let removed = try cli.run(["remove", "http://127.0.0.1:8765/notes/lru.html"])
        #expect(removed.status == 0, "\(removed.stderr)")
        #expect(try cli.run(["stats"]).stdout.contains("pages:   5"))
        let again = try cli.run(["show", page])
        #expect(again.stdout.contains("When to pay for fsync"))
    }

    @Test func aPinnedPageStaysWhateverTheLimit() throws {
        let server = try TestHTTPServer()
        var links = ""
        for i in 1...6 {
            server.setPage(
                "/p\(i).html", .init(NotesOfflineEndToEndTests.note("P\(i)", String(repeating: "x", count: 3000))))
            links += "<a href=\"p\(i).html\">p</a>"
        }
        server.setPage("/index.html", .init("<html><body>\(links)</body></html>"))
        #expect(try cli.run(["limit", "20KB", "--yes"]).status == 0)
        let first = server.url("/p1.html").absoluteString
        #expect(try cli.run(["fetch", first]).status == 0)
        let pinned = try cli.run(["pin", first])
        #expect(pinned.status == 0, "\(pinned.stderr)")
        #expect(pinned.stdout.contains("pinned"))
        #expect(try cli.run(["pin", server.url("/p6.html").absoluteString]).status == 1)  // not cached yet

        #expect(try cli.run(["sync", server.url("/index.html").absoluteString]).status == 0)
        #expect(try cli.run(["sync", server.url("/index.html").absoluteString]).status == 0)
        let listed = try cli.run(["list"]).stdout
        #expect(listed.contains("* p1.html"))
        #expect(listed.contains("* pinned"))
        let stats = try cli.run(["stats"]).stdout
        #expect(stats.contains("pinned:  1"))
        #expect(try cli.run(["show", first]).status == 0)

        #expect(try cli.run(["unpin", first]).status == 0)
        #expect(try cli.run(["unpin", first]).status == 1)
        #expect(try cli.run(["stats"]).stdout.contains("pinned:  0"))
    }
}
