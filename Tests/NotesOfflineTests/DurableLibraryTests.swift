import Foundation
import SwiftyCacheCore
import SwiftyCacheTestSupport
import Testing

/// `--durable`: a library kept where a system purge of the caches folder does not reach.
@Suite struct DurableLibraryTests {
    let directory = TemporaryDirectory()
    var cli: CLI { CLI(cacheDirectory: directory.appending("unused")) }
    /// The platform's folders, in this test's directory.
    var environment: [String: String] {
        [
            "XDG_CACHE_HOME": directory.appending("cache").path(percentEncoded: false),
            "XDG_DATA_HOME": directory.appending("data").path(percentEncoded: false),
        ]
    }

    func run(_ arguments: [String]) throws -> CLI.Result {
        try cli.run(arguments, withCacheDirectory: false, environment: environment)
    }

    @Test func aDurableLibrarySurvivesAPurgeOfTheCachesFolder() throws {
        let server = try TestHTTPServer()
        server.setPage("/n.html", .init(NotesOfflineEndToEndTests.note("Kept note", "text")))
        let fetched = try run(["fetch", server.url("/n.html").absoluteString, "--durable"])
        #expect(fetched.status == 0, "\(fetched.stderr)")
        let kept = directory.appending("data/notes-offline")
        #expect(FileManager.default.fileExists(atPath: kept.appending(path: "pages/journal").path))
        #expect(
            try String(contentsOf: kept.appending(path: "pages/objectcache-class"), encoding: .utf8) == "durable\n")
        // The system empties the caches folder; the library is elsewhere, and found without the flag.
        try? FileManager.default.removeItem(at: directory.appending("cache"))
        let listed = try run(["list"])
        #expect(listed.status == 0, "\(listed.stderr)")
        #expect(listed.stdout.contains("n.html"))
        let shown = try run(["show", server.url("/n.html").absoluteString])
        #expect(shown.stdout.contains("Kept note"), "\(shown.stderr)")
        #expect(try run(["stats"]).stdout.contains("data/notes-offline"))
    }

    @Test func aPurgeableLibraryIsNotTurnedDurableInPlace() throws {
        let server = try TestHTTPServer()
        server.setPage("/n.html", .init(NotesOfflineEndToEndTests.note("Note", "text")))
        let folder = directory.appending("library").path(percentEncoded: false)
        let url = server.url("/n.html").absoluteString
        #expect(try run(["fetch", url, "--cache-dir", folder]).status == 0)
        let refused = try run(["fetch", url, "--cache-dir", folder, "--durable"])
        expectOneLineError(refused, containing: "is a purgeable cache")
        // It still reads, and a new folder can be durable.
        #expect(try run(["list", "--cache-dir", folder]).stdout.contains("n.html"))
        let other = directory.appending("kept").path(percentEncoded: false)
        #expect(try run(["fetch", url, "--cache-dir", other, "--durable"]).status == 0)
        #expect(try run(["fetch", url, "--cache-dir", other]).status == 0)
    }
}
