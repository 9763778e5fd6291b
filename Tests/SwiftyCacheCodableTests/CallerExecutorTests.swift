import Dispatch
import Foundation
import SwiftyCacheCodable
import SwiftyCacheCore
import SwiftyCacheTestSupport
import Testing

/// A serial executor that counts the jobs it is given: each time a task comes back to it after
/// a hop away.
///
/// `@unchecked Sendable`: its stored properties are a dispatch queue (safe from any thread) and
/// a counter behind a lock.
final class CountingExecutor: SerialExecutor, @unchecked Sendable {
    let queue = DispatchQueue(label: "counting-executor")
    let jobs = LockedState(0)

    func enqueue(_ job: consuming ExecutorJob) {
        jobs.withLock { $0 += 1 }
        let job = UnownedJob(job)
        queue.async { job.runSynchronously(on: self.asUnownedSerialExecutor()) }
    }

    func asUnownedSerialExecutor() -> UnownedSerialExecutor { UnownedSerialExecutor(ordinary: self) }
}

/// An actor on a ``CountingExecutor``, as a view model on the main actor.
actor CountedReader {
    let executor = CountingExecutor()
    nonisolated var unownedExecutor: UnownedSerialExecutor { executor.asUnownedSerialExecutor() }

    func readPlain(_ cache: ObjectCache<String, Note>, _ keys: [String]) async throws -> Int {
        var found = 0
        for key in keys where try await cache.value(forKey: key) != nil { found += 1 }
        return found
    }

    func readFetching(_ cache: ObjectCache<String, Note>, _ keys: [String]) async throws -> Int {
        var found = 0
        for key in keys {
            _ = try await cache.value(forKey: key, maxAge: .seconds(3_600)) { _ in sampleNote }
            found += 1
        }
        return found
    }
}

/// A memory hit from an actor returns without leaving it: the `async` reads run on the
/// caller's executor (a hop away and back cost a hit from the main actor 20 µs).
@Suite struct CallerExecutorTests {
    let directory = TemporaryDirectory()

    #if compiler(>=6.2)
    @Test func memoryHitsFromAnActorStayOnIt() async throws {
        let cache = try ObjectCache<String, Note>(directory: directory.url)
        let keys = (0..<50).map { "n\($0)" }
        for key in keys { try await cache.set(sampleNote, forKey: key) }
        let reader = CountedReader()
        let before = reader.executor.jobs.withLock { $0 }
        #expect(try await reader.readPlain(cache, keys) == 50)
        #expect(try await reader.readFetching(cache, keys) == 50)
        let jobs = reader.executor.jobs.withLock { $0 } - before
        // The two calls into the actor; a hop per read would add a hundred.
        #expect(jobs <= 4, "\(jobs) jobs")
        // A miss does leave (for the disk), and comes back.
        #expect(try await reader.readPlain(cache, ["absent"]) == 0)
        #expect(reader.executor.jobs.withLock { $0 } - before > jobs)
    }
    #endif
}
