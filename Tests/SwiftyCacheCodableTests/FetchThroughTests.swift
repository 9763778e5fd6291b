import Foundation
import SwiftyCacheCodable
import SwiftyCacheCore
import SwiftyCacheTestSupport
import Testing

/// A fetch that waits until the test opens it (or its task is cancelled), counting its runs.
final class GatedFetch: Sendable {
    private let runs = LockedState(0)
    private let cancellations = LockedState(0)
    private let gate: AsyncStream<Void>
    private let opener: AsyncStream<Void>.Continuation
    let result: @Sendable (String, Int) throws -> String

    init(result: @escaping @Sendable (String, Int) throws -> String = { key, run in "\(key) #\(run)" }) {
        (gate, opener) = AsyncStream<Void>.makeStream(bufferingPolicy: .unbounded)
        self.result = result
    }

    var runCount: Int { runs.withLock { $0 } }
    var cancelledCount: Int { cancellations.withLock { $0 } }

    /// Lets one waiting run finish (and every run after it, since the stream ends).
    func open() { opener.finish() }

    func callAsFunction(_ key: String) async throws -> String {
        let run = runs.withLock {
            $0 += 1
            return $0
        }
        // Ends when the test opens the gate, or at once when this task is cancelled.
        for await _ in gate {}
        if Task.isCancelled {
            cancellations.withLock { $0 += 1 }
            throw CancellationError()
        }
        return try result(key, run)
    }
}

struct FetchFailure: Error, Equatable {}

/// Waits, without sleeping, until `condition` holds (other tasks make progress between checks).
/// The callers it waits for find their key in memory (a stale value) and join the fetch with
/// no disk I/O in between, so the wait is short even when other suites fill the I/O pool.
func eventually(_ condition: () -> Bool) async {
    let deadline = ContinuousClock.now + .seconds(120)
    while !condition(), ContinuousClock.now < deadline { await Task.yield() }
}

@Suite(.tags(.concurrency)) struct FetchThroughTests {
    let directory = TemporaryDirectory()
    let clock = TestClock()

    func cache(_ name: String = "c", memoryLimit: Int = 100) throws -> ObjectCache<String, String> {
        try ObjectCache(
            directory: directory.appending(name),
            configuration: .init(memoryLimit: memoryLimit, clock: clock.function))
    }

    /// A cache holding an old value of each key, in memory: a fetch-through read of them with a
    /// `maxAge` of 60 s fetches, and its callers reach the fetch without touching the disk.
    func cacheWithStaleValues(_ keys: [String]) async throws -> ObjectCache<String, String> {
        let cache = try cache()
        for key in keys { try await cache.set("old", forKey: key) }
        clock.advance(by: 120)
        return cache
    }

    @Test func aMissFetchesAndStoresAndAFreshValueDoesNotFetch() async throws {
        let cache = try cache()
        let fetch = GatedFetch()
        fetch.open()
        #expect(try await cache.value(forKey: "a", maxAge: .seconds(60), fetch: fetch.callAsFunction) == "a #1")
        #expect(try await cache.value(forKey: "a", maxAge: .seconds(60), fetch: fetch.callAsFunction) == "a #1")
        #expect(fetch.runCount == 1)
        try await cache.close()
        // Stored on disk, with its creation date: fresh after a reopen, until maxAge passes.
        let reopened = try self.cache()
        clock.advance(by: 30)
        #expect(try await reopened.value(forKey: "a", maxAge: .seconds(60), fetch: fetch.callAsFunction) == "a #1")
        #expect(fetch.runCount == 1)
        clock.advance(by: 31)
        #expect(try await reopened.value(forKey: "a", maxAge: .seconds(60), fetch: fetch.callAsFunction) == "a #2")
        #expect(try await reopened.value(forKey: "a") == "a #2")
        try await reopened.close()
    }

    @Test func aYoungHitAndAStaleValueInMemoryEachCountOneMemoryHit() async throws {
        let cache = try cache()
        let fetch = GatedFetch()
        fetch.open()
        try await cache.set("old", forKey: "k")
        let before = cache.statistics.memoryHits
        #expect(try await cache.value(forKey: "k", maxAge: .seconds(60), fetch: fetch.callAsFunction) == "old")
        #expect(cache.statistics.memoryHits == before + 1)
        #expect(fetch.runCount == 0)
        // Older than maxAge: found in memory once more (counted once), then fetched.
        clock.advance(by: 61)
        #expect(try await cache.value(forKey: "k", maxAge: .seconds(60), fetch: fetch.callAsFunction) == "k #1")
        #expect(cache.statistics.memoryHits == before + 2)
        #expect(fetch.runCount == 1)
        // Expired by its own time to live: neither young nor stale, so fetched.
        try await cache.set("short", forKey: "e", expiresAfter: .seconds(5))
        clock.advance(by: 6)
        #expect(try await cache.value(forKey: "e", maxAge: .seconds(60), fetch: fetch.callAsFunction) == "e #2")
        try await cache.close()
    }

    /// A caller that missed just before another caller's fetch stored its value does not
    /// fetch again: the flight it starts finds that value, in memory, or on disk when the
    /// memory tier keeps nothing.
    @Test(arguments: [0, 100])
    func aFlightStartedJustAfterAnotherStoredFindsItsValue(memoryLimit: Int) async throws {
        let cache = try cache(memoryLimit: memoryLimit)
        let fetch = GatedFetch()
        fetch.open()
        #expect(try await cache.value(forKey: "k", maxAge: .seconds(60), fetch: fetch.callAsFunction) == "k #1")
        // What the late caller's flight runs, after the first flight has stored and left.
        #expect(try await cache.fetchAndStore("k", maxAge: .seconds(60), fetch: fetch.callAsFunction) == "k #1")
        #expect(fetch.runCount == 1)
        clock.advance(by: 61)
        #expect(try await cache.fetchAndStore("k", maxAge: .seconds(60), fetch: fetch.callAsFunction) == "k #2")
        try await cache.close()
    }

    @Test func aHundredConcurrentCallersShareOneFetch() async throws {
        let cache = try await cacheWithStaleValues(["k"])
        let fetch = GatedFetch()
        let results = try await withThrowingTaskGroup(of: String.self) { group in
            for _ in 0..<100 {
                group.addTask { try await cache.value(forKey: "k", maxAge: .seconds(60), fetch: fetch.callAsFunction) }
            }
            await eventually { cache.flights.waiterCount(for: "k") == 100 }
            #expect(cache.flights.waiterCount(for: "k") == 100)
            fetch.open()
            return try await group.reduce(into: [String]()) { $0.append($1) }
        }
        #expect(results == Array(repeating: "k #1", count: 100))
        #expect(fetch.runCount == 1)
        #expect(!cache.flights.isRunning("k"))
        try await cache.close()
    }

    @Test func aCancelledCallerLeavesTheFetchToTheOthersAndTheLastOneOutCancelsIt() async throws {
        let cache = try await cacheWithStaleValues(["k", "j"])
        let fetch = GatedFetch()
        let first = Task { try await cache.value(forKey: "k", maxAge: .seconds(60), fetch: fetch.callAsFunction) }
        let second = Task { try await cache.value(forKey: "k", maxAge: .seconds(60), fetch: fetch.callAsFunction) }
        await eventually { cache.flights.waiterCount(for: "k") == 2 }
        first.cancel()
        await #expect(throws: CancellationError.self) { try await first.value }
        #expect(cache.flights.waiterCount(for: "k") == 1)
        #expect(fetch.cancelledCount == 0)
        fetch.open()
        #expect(try await second.value == "k #1")
        #expect(fetch.runCount == 1)

        // Alone, a caller's cancellation cancels the fetch, and the next caller fetches anew.
        let other = GatedFetch()
        let lone = Task { try await cache.value(forKey: "j", maxAge: .seconds(60), fetch: other.callAsFunction) }
        await eventually { cache.flights.waiterCount(for: "j") == 1 }
        lone.cancel()
        await #expect(throws: CancellationError.self) { try await lone.value }
        await eventually { other.cancelledCount == 1 }
        #expect(other.cancelledCount == 1)
        #expect(try await cache.value(forKey: "j") == "old")
        other.open()
        #expect(try await cache.value(forKey: "j", maxAge: .seconds(60), fetch: other.callAsFunction) == "j #2")
        try await cache.close()
    }

    @Test func aFailedFetchFailsEveryWaiterAndStoresNothing() async throws {
        let cache = try await cacheWithStaleValues(["k"])
        let fetch = GatedFetch { _, _ in throw FetchFailure() }
        let waiters = (0..<3).map { _ in
            Task { try await cache.value(forKey: "k", maxAge: .seconds(60), fetch: fetch.callAsFunction) }
        }
        await eventually { cache.flights.waiterCount(for: "k") == 3 }
        fetch.open()
        for waiter in waiters { await #expect(throws: FetchFailure.self) { try await waiter.value } }
        #expect(fetch.runCount == 1)
        #expect(try await cache.value(forKey: "k") == "old")
        try await cache.close()
    }

    @Test func aStaleValueIsFetchedAgainOrServedWhenAskedFor() async throws {
        let cache = try cache()
        try await cache.set("old", forKey: "k")
        clock.advance(by: 120)
        let failing = GatedFetch { _, _ in throw FetchFailure() }
        failing.open()

        // Stale, no option: the fetch's error.
        await #expect(throws: FetchFailure.self) {
            try await cache.value(forKey: "k", maxAge: .seconds(60), fetch: failing.callAsFunction)
        }
        // Stale if error: the old value.
        #expect(
            try await cache.value(
                forKey: "k", maxAge: .seconds(60), options: .staleIfError, fetch: failing.callAsFunction)
                == "old")
        #expect(failing.runCount == 2)

        // Stale while revalidate: the old value at once, the new one stored in the background.
        let refresh = GatedFetch { _, _ in "new" }
        #expect(
            try await cache.value(
                forKey: "k", maxAge: .seconds(60), options: .staleWhileRevalidate, fetch: refresh.callAsFunction)
                == "old")
        #expect(cache.flights.isRunning("k"))
        // A caller that joins the background fetch and leaves does not cancel it.
        let joiner = Task { try await cache.value(forKey: "k", maxAge: .seconds(60), fetch: refresh.callAsFunction) }
        await eventually { cache.flights.waiterCount(for: "k") == 1 }
        joiner.cancel()
        await #expect(throws: CancellationError.self) { try await joiner.value }
        refresh.open()
        await eventually { !cache.flights.isRunning("k") }
        #expect(refresh.cancelledCount == 0)
        #expect(try await cache.value(forKey: "k") == "new")
        #expect(refresh.runCount == 1)
        #expect(try await cache.value(forKey: "k", maxAge: .seconds(60), fetch: failing.callAsFunction) == "new")
        try await cache.close()
    }
}
