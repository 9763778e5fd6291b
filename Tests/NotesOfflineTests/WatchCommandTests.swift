import Foundation
import SwiftyCacheTestSupport
import Testing

/// `notes-offline watch`, in a process of its own beside the processes that change the cache:
/// a line for each page updated or removed, until it is stopped.
@Suite struct WatchCommandTests {
    let directory = TemporaryDirectory()
    var cli: CLI { CLI(cacheDirectory: directory.appending("cache")) }

    /// Reads the watcher's output until it holds `text`, or it ends (the runner's watchdog ends
    /// the process after 60 seconds, so a line that never comes fails the test).
    static func read(_ handle: FileHandle, until text: String, into said: inout String) {
        while !said.contains(text) {
            let chunk = handle.availableData
            guard !chunk.isEmpty else { return }
            said += String(decoding: chunk, as: UTF8.self)
        }
    }

    @Test func aWatcherPrintsWhatAnotherProcessUpdatesAndRemoves() throws {
        let server = try TestHTTPServer()
        defer { server.stop() }
        let page = server.url("/a.html")
        server.setPage("/a.html", .init(NotesOfflineEndToEndTests.note("Alpha", "first"), etag: "\"a1\""))
        #expect(try cli.run(["fetch", page.absoluteString]).status == 0)

        let watcher = try cli.start(["watch", page.absoluteString])
        var said = ""
        Self.read(watcher.stdout, until: "watching", into: &said)

        server.setPage("/a.html", .init(NotesOfflineEndToEndTests.note("Alpha", "second"), etag: "\"a2\""))
        #expect(try cli.run(["fetch", page.absoluteString]).status == 0)
        Self.read(watcher.stdout, until: "updated \(page.absoluteString)", into: &said)
        #expect(try cli.run(["remove", page.absoluteString]).status == 0)
        Self.read(watcher.stdout, until: "removed \(page.absoluteString)", into: &said)

        watcher.process.interrupt()
        watcher.process.waitUntilExit()
        #expect(said.contains("updated \(page.absoluteString)"), "\(said)")
        #expect(said.contains("removed \(page.absoluteString)"), "\(said)")
    }

    /// Watching every page, as a new user tries it: a page another shell fetches for the first
    /// time, and its removal, and the removal of a page cached before the watch began, each
    /// print the page's address (the watcher reads none of them itself).
    @Test func aWatcherOfEveryPageNamesPagesItNeverRead() throws {
        let server = try TestHTTPServer()
        defer { server.stop() }
        let old = server.url("/old.html")
        let new = server.url("/new.html")
        server.setPage("/old.html", .init(NotesOfflineEndToEndTests.note("Old", "kept"), etag: "\"o1\""))
        server.setPage("/new.html", .init(NotesOfflineEndToEndTests.note("New", "fresh"), etag: "\"n1\""))
        #expect(try cli.run(["fetch", old.absoluteString]).status == 0)

        let watcher = try cli.start(["watch"])
        var said = ""
        Self.read(watcher.stdout, until: "watching every page", into: &said)
        #expect(try cli.run(["fetch", new.absoluteString]).status == 0)
        Self.read(watcher.stdout, until: "updated \(new.absoluteString)", into: &said)
        #expect(try cli.run(["remove", new.absoluteString]).status == 0)
        Self.read(watcher.stdout, until: "removed \(new.absoluteString)", into: &said)
        #expect(try cli.run(["remove", old.absoluteString]).status == 0)
        Self.read(watcher.stdout, until: "removed \(old.absoluteString)", into: &said)

        watcher.process.interrupt()
        watcher.process.waitUntilExit()
        for line in ["updated \(new.absoluteString)", "removed \(new.absoluteString)", "removed \(old.absoluteString)"]
        {
            #expect(said.contains(line), "\(said)")
        }
        #expect(!said.contains("a page\n"), "\(said)")
    }
}
