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
}
