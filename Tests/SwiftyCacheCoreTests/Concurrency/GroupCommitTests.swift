import Foundation
import SwiftyCacheTestSupport
import Testing

@testable import SwiftyCacheCore

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Durable commits from several threads share syncs (`GroupCommit`): what queues while a group
/// runs forms the next group, and in the engine every call that returned is durable, none that
/// threw is visible. Shared state goes through `LockedState` (a pthread mutex), which
/// ThreadSanitizer sees, not `Mutex` (a futex on Linux, which it does not).
@Suite(.tags(.concurrency)) struct GroupCommitTests {
    /// The groups a `run` was called with.
    final class Runs: Sendable {
        let groups = LockedState<[[Int]]>([])
    }

    @Test func membersQueuedWhileAGroupRunsFormTheNextGroup() {
        let commits = GroupCommit<Int, Int>()
        let runs = Runs()
        let started = DispatchSemaphore(value: 0)
        let release = DispatchSemaphore(value: 0)
        let first = onNewThread {
            let outcome = commits.submit(0) { group in
                runs.groups.withLock { $0.append(group) }
                started.signal()
                release.wait()
                return group.map { $0 * 10 }
            }
            #expect(outcome == 0)
        }
        started.wait()
        let others = (1...3).map { member in
            onNewThread {
                let outcome = commits.submit(member) { group in
                    runs.groups.withLock { $0.append(group) }
                    return group.map { $0 * 10 }
                }
                #expect(outcome == member * 10)
            }
        }
        // Without sleeping: the three wait in the queue behind the running group.
        while commits.queuedCount < 3 { sched_yield() }
        release.signal()
        first.wait()
        for other in others { other.wait() }
        let groups = runs.groups.withLock { $0 }
        #expect(groups.count == 2)
        #expect(groups.first == [0])
        #expect(groups.last.map { Set($0) } == [1, 2, 3])
    }

    @Test func exclusiveWorkWaitsForTheRunningGroupAndHoldsOffTheNext() {
        let commits = GroupCommit<Int, Int>()
        let events = LockedState<[String]>([])
        let started = DispatchSemaphore(value: 0)
        let release = DispatchSemaphore(value: 0)
        let leader = onNewThread {
            _ = commits.submit(0) { group in
                started.signal()
                release.wait()
                events.withLock { $0.append("group") }
                return group
            }
        }
        started.wait()
        let exclusive = onNewThread { commits.exclusive { events.withLock { $0.append("exclusive") } } }
        release.signal()
        leader.wait()
        exclusive.wait()
        #expect(events.withLock { $0 } == ["group", "exclusive"])
    }

    /// The model check: four threads of durable sets, one group's sync failing. Every call that
    /// returned reads back, in the session and after a power cut that keeps only what was
    /// synced; no call that threw is visible in either.
    @Test func everyReturnedCommitIsDurableAndNoFailedOneIsVisible() throws {
        let directory = TemporaryDirectory()
        let fileSystem = FaultInjectingFileSystem()
        fileSystem.recordSyncs()
        let cache = try DiskLRUCache(
            directory: directory.url, appVersion: 1, valueCount: 1, maxSize: Int.max,
            options: DiskLRUCache.Options(syncsWrites: true, storage: .packed), fileSystem: fileSystem)
        #expect(cache.groupCommit != nil)
        fileSystem.failCall(named: "fsync", occurrence: 40, errno: EIO)
        let threads = 4
        let setsPerThread = 60
        let outcomes = LockedState<[String: Bool]>([:])
        let done = (0..<threads).map { thread in
            onNewThread {
                for i in 0..<setsPerThread {
                    let key = "t\(thread)k\(i)"
                    let returned = (try? cache.setData([Data(key.utf8)], forKey: key)) != nil
                    outcomes.withLock { $0[key] = returned }
                }
            }
        }
        for thread in done { thread.wait() }
        let all = outcomes.withLock { $0 }
        #expect(all.count == threads * setsPerThread)
        #expect(all.values.contains(false), "the failed sync failed some calls")
        #expect(fileSystem.calls(to: "fsync") < threads * setsPerThread + 10)
        for (key, returned) in all {
            let value = try cache.data(forKey: key)
            #expect(value == (returned ? [Data(key.utf8)] : nil), "\(key) in the session")
        }
        cache.simulateCrash()
        // The power cut: each file cut to what its last sync covered (what a failed sync should
        // have covered zeroed), unsynced files empty.
        let cut = try fileSystem.crashCopy(of: directory, powerCut: true)
        let reopened = try DiskLRUCache(
            directory: cut.url, appVersion: 1, valueCount: 1, maxSize: Int.max,
            options: DiskLRUCache.Options(syncsWrites: true, storage: .packed))
        for (key, returned) in all {
            let value = try reopened.data(forKey: key)
            #expect(value == (returned ? [Data(key.utf8)] : nil), "\(key) after the power cut")
        }
    }
}
