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

    /// Starts `watch` with `arguments`, then runs each step's command in a process of its own
    /// and reads the watcher's output until it says the step's line; stops the watcher with
    /// Ctrl-C and returns all it said.
    func watch(_ arguments: [String], steps: [(command: [String], line: String)]) throws -> String {
        let watcher = try cli.start(["watch"] + arguments)
        var said = ""
        Self.read(watcher.stdout, until: "watching", into: &said)
        for step in steps {
            #expect(try cli.run(step.command).status == 0)
            Self.read(watcher.stdout, until: step.line, into: &said)
        }
        watcher.process.interrupt()
        watcher.process.waitUntilExit()
        for step in steps { #expect(said.contains(step.line), "\(said)") }
        return said
    }

    @Test func aWatcherPrintsWhatAnotherProcessUpdatesAndRemoves() throws {
        let server = try TestHTTPServer()
        defer { server.stop() }
        let page = server.url("/a.html").absoluteString
        server.setPage("/a.html", .init(NotesOfflineEndToEndTests.note("Alpha", "first"), etag: "\"a1\""))
        #expect(try cli.run(["fetch", page]).status == 0)
        server.setPage("/a.html", .init(NotesOfflineEndToEndTests.note("Alpha", "second"), etag: "\"a2\""))
        let said = try watch(
            [page],
            steps: [
                (["fetch", page], "updated \(page)"),
                (["remove", page], "removed \(page)"),
            ])
        #expect(said.contains("watching 1 pages"), "\(said)")
    }

    /// Watching every page, as a new user tries it: a page another shell fetches for the first
    /// time, and its removal, and the removal of a page cached before the watch began, each
    /// print the page's address (the watcher reads none of them itself).
    @Test func aWatcherOfEveryPageNamesPagesItNeverRead() throws {
        let server = try TestHTTPServer()
        defer { server.stop() }
        let old = server.url("/old.html").absoluteString
        let new = server.url("/new.html").absoluteString
        server.setPage("/old.html", .init(NotesOfflineEndToEndTests.note("Old", "kept"), etag: "\"o1\""))
        server.setPage("/new.html", .init(NotesOfflineEndToEndTests.note("New", "fresh"), etag: "\"n1\""))
        #expect(try cli.run(["fetch", old]).status == 0)
        let said = try watch(
            [],
            steps: [
                (["fetch", new], "updated \(new)"),
                (["remove", new], "removed \(new)"),
                (["remove", old], "removed \(old)"),
            ])
        #expect(said.contains("watching every page"), "\(said)")
        #expect(!said.contains("a page\n"), "\(said)")
    }
}
