import Foundation
import SwiftyCacheCore
import SwiftyCacheTestSupport
import Testing

/// The journal watcher calls back when the journal is appended to or replaced: through the
/// platform's notifications, and through the timed check that stands in where they cannot be
/// set up (which calls back every 50 ms, changed or not).
@Suite(.tags(.concurrency)) struct JournalWatcherTests {
    let directory = TemporaryDirectory()

    /// The watcher's calls, counted, and a way to wait for one more.
    final class Calls: Sendable {
        private let state = LockedState<(count: Int, waiter: AsyncStream<Void>.Continuation?)>((0, nil))

        func call() {
            let waiter = state.withLock { state -> AsyncStream<Void>.Continuation? in
                state.count += 1
                return state.waiter
            }
            waiter?.yield()
        }

        var count: Int { state.withLock { $0.count } }

        /// Whether a call comes after the first `seen`, within 120 seconds (a bound on a
        /// failure, never a hang).
        func next(after seen: Int) async -> Bool {
            let stream = AsyncStream<Void>.makeStream(bufferingPolicy: .bufferingNewest(1))
            let already = state.withLock { state -> Bool in
                state.waiter = stream.continuation
                return state.count > seen
            }
            if already { return true }
            return await withTaskGroup(of: Bool.self) { group in
                group.addTask {
                    for await _ in stream.stream { return true }
                    return false
                }
                group.addTask {
                    _ = await Watchdog.expire(after: 120)
                    return false
                }
                let first = await group.next() ?? false
                group.cancelAll()
                return first
            }
        }
    }

    @Test(arguments: [JournalWatcher.Mechanism.automatic, .timed])
    func anAppendAndAReplacementAreNoticed(mechanism: JournalWatcher.Mechanism) async throws {
        try FileManager.default.createDirectory(at: directory.url, withIntermediateDirectories: true)
        let journal = directory.url.appending(path: "journal")
        try Data("header\n".utf8).write(to: journal)
        let calls = Calls()
        let watcher = JournalWatcher(directory: directory.path, mechanism: mechanism) { calls.call() }
        defer { watcher.stop() }
        // Once watching, the watcher calls back at once (for what changed meanwhile).
        #expect(await calls.next(after: 0))
        var seen = calls.count
        let handle = try FileHandle(forWritingTo: journal)
        try handle.seekToEnd()
        try handle.write(contentsOf: Data("CLEAN k 1 1\n".utf8))
        try handle.close()
        #expect(await calls.next(after: seen), "an append")
        seen = calls.count
        let replacement = directory.url.appending(path: "journal.tmp")
        try Data("header\nCLEAN j 1 1\n".utf8).write(to: replacement)
        try FileManager.default.removeItem(at: journal)
        try FileManager.default.moveItem(at: replacement, to: journal)
        #expect(await calls.next(after: seen), "a replacement")
    }
}
