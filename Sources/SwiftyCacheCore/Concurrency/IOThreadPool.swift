#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
#if canImport(Darwin)
import Darwin
#elseif canImport(Glibc)
@preconcurrency import Glibc
#elseif canImport(Musl)
@preconcurrency import Musl
#endif

/// A bounded set of threads for the blocking file I/O of the `async` API, as NIO's and GRDB's
/// thread pools: never Swift's cooperative pool (blocking there starves every other task), and
/// never an unbounded queue (a burst of requests would start a thread each).
///
/// Threads start lazily, one per waiting job, up to ``limit``; idle threads wait on a condition
/// variable. Jobs run in submission order.
package final class IOThreadPool: Sendable {
    /// The pool the `async` overloads use.
    package static let shared = IOThreadPool(limit: ProcessInfo.processInfo.activeProcessorCount)

    private struct State {
        /// Queued jobs from ``head`` on; a job taken is set to `nil` at once, so that what it
        /// captured (a cache, the values it writes) is released when it ends, not when the
        /// array is next trimmed.
        var jobs: [(@Sendable () -> Void)?] = []
        var head = 0
        var threads = 0
        var idle = 0
        /// Threads polling for a job before they sleep (see `waitBriefly`).
        var polling = 0
        var limit: Int
    }

    private let state: ConditionLock<State>

    /// - Parameter limit: The most threads the pool runs at once, at least 1.
    package init(limit: Int) {
        state = ConditionLock(State(limit: max(1, limit)))
    }

    /// The most threads the pool runs at once; lowering it lets extra threads finish their job
    /// and exit.
    package var limit: Int {
        get { state.withLock { $0.limit } }
        set { state.withLock { $0.limit = max(1, newValue) } }
    }

    /// The threads started so far and still running.
    package var threadCount: Int { state.withLock { $0.threads } }

    /// Runs `job` on one of the pool's threads.
    ///
    /// - Complexity: O(1) amortized.
    package func submit(_ job: @escaping @Sendable () -> Void) {
        let startsThread = state.withLock { state -> Bool in
            state.jobs.append(job)
            if state.idle + state.polling > 0 { return false }
            guard state.threads < state.limit else { return false }
            state.threads += 1
            return true
        }
        if startsThread {
            if !Self.startThread({ [self] in self.work() }) {
                // No thread could be started (a process limit): run the job here rather than lose it.
                state.withLock { $0.threads -= 1 }
                runPendingJobsHere()
            }
        } else {
            state.signal()
        }
    }

    /// The name of the pool's threads.
    package static let threadName = "SwiftyCache.io"

    /// Whether the calling thread is one of a pool's.
    package static var isCurrentThreadInPool: Bool { pthread_getspecific(poolThreadKey) != nil }

    /// Marks the pool's threads (a thread-specific value), so that tests can tell where work ran.
    private static let poolThreadKey: pthread_key_t = {
        var key = pthread_key_t()
        pthread_key_create(&key, nil)
        return key
    }()

    /// Starts a detached, named thread running `body`; `false` if the system refused.
    private static func startThread(_ body: @escaping () -> Void) -> Bool {
        final class Box {
            let body: () -> Void
            init(_ body: @escaping () -> Void) { self.body = body }
        }
        let context = Unmanaged.passRetained(Box(body)).toOpaque()
        #if canImport(Darwin)
        var thread: pthread_t?
        #else
        var thread = pthread_t()
        #endif
        let result = pthread_create(
            &thread, nil,
            { context in
                pthread_setspecific(IOThreadPool.poolThreadKey, UnsafeRawPointer(bitPattern: 1))
                // The pointer is the one passed below, never nil.
                guard let context else { return nil }
                Unmanaged<Box>.fromOpaque(context).takeRetainedValue().body()
                return nil
            }, context)
        guard result == 0 else {
            Unmanaged<Box>.fromOpaque(context).release()
            return false
        }
        #if canImport(Darwin)
        if let thread { pthread_detach(thread) }
        #else
        pthread_detach(thread)
        #endif
        return true
    }

    /// Runs the queued jobs on the calling thread (when no thread can be started).
    private func runPendingJobsHere() {
        while let job = state.withLock({ state -> (@Sendable () -> Void)? in
            guard state.head < state.jobs.count else { return nil }
            defer { state.head += 1 }
            return state.jobs[state.head].take()
        }) {
            job()
        }
    }

    private func work() {
        while let job = nextJob() { job() }
    }

    /// How long an idle thread polls for the next job before it sleeps: an `async` caller
    /// awaiting reads one after another submits the next within microseconds, and finding it
    /// without a sleep and a wake-up (tens of microseconds each on a busy machine) halves the
    /// cost of the hop.
    static let pollNanoseconds: UInt64 = 50_000

    /// Called holding the lock with no job queued: releases it, yields the core for up to
    /// ``pollNanoseconds`` while no job arrives, and takes it again; `true` if a job arrived.
    private func waitBriefly() -> Bool {
        state.value.polling += 1
        defer { state.value.polling -= 1 }
        let deadline = Self.monotonicNanoseconds() &+ Self.pollNanoseconds
        while Self.monotonicNanoseconds() < deadline {
            state.unlock()
            sched_yield()
            state.lock()
            if state.value.head < state.value.jobs.count { return true }
        }
        return false
    }

    private static func monotonicNanoseconds() -> UInt64 {
        var time = timespec()
        clock_gettime(CLOCK_MONOTONIC, &time)
        return UInt64(time.tv_sec) &* 1_000_000_000 &+ UInt64(time.tv_nsec)
    }

    /// The next job, waiting for one; `nil` when the thread must exit (the limit was lowered).
    private func nextJob() -> (@Sendable () -> Void)? {
        state.lock()
        defer { state.unlock() }
        while state.value.head == state.value.jobs.count {
            if state.value.threads > state.value.limit {
                state.value.threads -= 1
                return nil
            }
            if waitBriefly() { continue }
            state.value.idle += 1
            state.wait()
            state.value.idle -= 1
        }
        let job = state.value.jobs[state.value.head].take()
        state.value.head += 1
        // Drop finished jobs once they are most of the array: amortized O(1).
        if state.value.head >= 64 && state.value.head * 2 >= state.value.jobs.count {
            state.value.jobs.removeFirst(state.value.head)
            state.value.head = 0
        }
        return job
    }
}
