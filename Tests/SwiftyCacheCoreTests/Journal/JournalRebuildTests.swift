import Dispatch
import Foundation
import SwiftyCacheCore
import SwiftyCacheTestSupport
import Testing

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The background journal rebuild writes `journal.tmp` without the cache lock: operations go
/// on meanwhile, and what they journal follows the snapshot in the new journal.
@Suite(.tags(.concurrency)) struct JournalRebuildTests {
    let directory = TemporaryDirectory()
    let fileSystem = FaultInjectingFileSystem()
    /// Enough entries that the rebuilt journal (about 19 bytes a line) is larger than any
    /// other write the test makes: a flush of `READ` lines is at most about 8 KiB.
    static let entryCount = 800
    static let rebuildSize = 12_000

    func open(_ storage: DiskLRUCache.Storage) throws -> DiskLRUCache {
        try DiskLRUCache(
            directory: directory.url, appVersion: testAppVersion, valueCount: 1, maxSize: Int.max,
            options: DiskLRUCache.Options(storage: storage), fileSystem: fileSystem)
    }

    static func key(_ i: Int) -> String { "key-\(1_000_000 + i)" }
    /// A key of 112 characters: a thousand of their lines outweigh any other write.
    static func longKey(_ i: Int) -> String { key(i) + "-" + String(repeating: "k", count: 100) }

    /// Fills the cache, then writes the same values again until the redundant lines call for a
    /// rebuild (reads would in file storage only: packed storage journals none), whose write
    /// of `journal.tmp` is held. Returns once the write is held.
    func startHeldRebuild(_ cache: DiskLRUCache) throws -> CallHold {
        for i in 0..<Self.entryCount { try cache.setData([Data("v\(i)".utf8)], forKey: Self.key(i)) }
        cache.waitForBackgroundWork()
        let hold = fileSystem.holdNextWrite(largerThan: Self.rebuildSize)
        // 2,000 redundant lines (and more than the entries) call for a rebuild.
        for i in 0..<2_000 {
            let index = i % Self.entryCount
            try cache.setData([Data("v\(index)".utf8)], forKey: Self.key(index))
        }
        try #require(hold.waitUntilHeld(), "no rebuild started")
        return hold
    }

    /// Runs `body` on another thread; `false` if it did not finish within 30 seconds (as it
    /// would not if the rebuild held the cache lock while writing).
    func finishesWhileHeld(_ body: @escaping @Sendable () throws -> Void) -> Bool {
        let done = onNewThread {
            do { try body() } catch { Issue.record("operation failed: \(error)") }
        }
        return done.wait(timeout: .now() + 30) == .success
    }

    /// A reopen after a clean close: nothing wiped, restored, dropped or swept away.
    func expectNothingRepaired(_ report: RecoveryReport, sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(!report.wasWiped, sourceLocation: sourceLocation)
        #expect(!report.restoredBackup, sourceLocation: sourceLocation)
        #expect(report.droppedIncompleteEntries == 0, sourceLocation: sourceLocation)
        #expect(report.removedStrayFiles == 0, sourceLocation: sourceLocation)
    }

    func journalBytes() throws -> Int {
        try Data(contentsOf: directory.url.appendingPathComponent("journal")).count
    }

    @Test(arguments: bothStorages)
    func operationsGoOnDuringARebuildAndWhatTheyJournalSurvivesIt(storage: DiskLRUCache.Storage) throws {
        let cache = try open(storage)
        let hold = try startHeldRebuild(cache)
        let before = try journalBytes()
        let finished = finishesWhileHeld {
            try cache.setData([Data("during".utf8)], forKey: "added-during-rebuild")
            #expect(try cache.removeValue(forKey: Self.key(0)))
            try cache.setData([Data("new".utf8)], forKey: Self.key(1))
            #expect(try cache.data(forKey: Self.key(2)) == [Data("v2".utf8)])
        }
        hold.release()
        #expect(finished, "operations waited for the rebuild's write")
        cache.waitForBackgroundWork()
        // The journal was replaced by a compact one: of the 2,000 READ lines, only those
        // journaled after the rebuild began are left (the fills' DIRTY lines count as redundant
        // too, so it began after 1,200 reads).
        #expect(try journalBytes() < before)
        #expect(try JournalFixture.bodyLines(in: directory.url).filter { $0.hasPrefix("READ ") }.count <= 801)
        #expect(!JournalFixture.fileExists("journal.tmp", in: directory.url))
        // The new journal ends with what was journaled while it was written.
        let lines = try JournalFixture.bodyLines(in: directory.url)
        #expect(lines.contains { $0.hasPrefix("CLEAN added-during-rebuild ") })
        #expect(lines.contains("REMOVE \(Self.key(0))"))
        #expect(lines.last { $0.contains(" \(Self.key(1))") }?.hasPrefix("CLEAN ") == true)
        // A crash now: the next open replays the journal (no saved index to load).
        cache.simulateCrash()

        let reopened = try openCache(directory.url, valueCount: 1, storage: storage)
        #expect(try reopened.data(forKey: "added-during-rebuild") == [Data("during".utf8)])
        #expect(try reopened.data(forKey: Self.key(0)) == nil)
        #expect(try reopened.data(forKey: Self.key(1)) == [Data("new".utf8)])
        #expect(try reopened.data(forKey: Self.key(Self.entryCount - 1)) == [Data("v\(Self.entryCount - 1)".utf8)])
        #expect(try reopened.keys().count == Self.entryCount)
        #expect(!reopened.recoveryReport.wasWiped)
        #expect(!reopened.recoveryReport.loadedSavedIndex)
    }

    /// A rebuild formats its lines a batch at a time, each from the entries as they are when
    /// the batch is formatted, not from a copy of the index: entries changed after the rebuild
    /// began, in batches formatted before and after the change, replay to their last state.
    @Test(arguments: bothStorages)
    func entriesChangedBetweenBatchesReplayToTheirLastState(storage: DiskLRUCache.Storage) throws {
        let cache = try open(storage)
        let count = 1_200  // two batches: 1,024 lines and 176
        for i in 0..<count { try cache.setData([Data("v\(i)".utf8)], forKey: Self.longKey(i)) }
        cache.waitForBackgroundWork()
        // The first batch, about 120 KB of lines (a flush of READ lines is at most 8 KiB), is
        // held once formatted; the second waits. The same values written again call for it.
        let hold = fileSystem.holdNextWrite(largerThan: 20_000)
        for i in 0..<(count + 2_600) {
            try cache.setData([Data("v\(i % count)".utf8)], forKey: Self.longKey(i % count))
        }
        try #require(hold.waitUntilHeld(), "no rebuild started")
        // Spread over the LRU order, so that some fall in the held batch and some after it.
        let changed = stride(from: 0, to: count, by: 100).map { $0 }
        let finished = finishesWhileHeld {
            for (n, i) in changed.enumerated() {
                switch n % 3 {
                case 0: #expect(try cache.removeValue(forKey: Self.longKey(i)))
                case 1: try cache.setData([Data("changed".utf8)], forKey: Self.longKey(i))
                default:
                    #expect(try cache.removeValue(forKey: Self.longKey(i)))
                    try cache.setData([Data("again".utf8)], forKey: Self.longKey(i))
                }
            }
            try cache.setData([Data("new".utf8)], forKey: "brand-new")
        }
        hold.release()
        #expect(finished, "operations waited for the rebuild's write")
        cache.waitForBackgroundWork()
        // Rebuilt: of the fill's DIRTY lines, only the changes' are left.
        #expect(try JournalFixture.bodyLines(in: directory.url).filter { $0.hasPrefix("DIRTY ") }.count < 20)
        #expect(!JournalFixture.fileExists("journal.tmp", in: directory.url))
        cache.simulateCrash()

        let reopened = try openCache(directory.url, valueCount: 1, storage: storage)
        #expect(!reopened.recoveryReport.loadedSavedIndex)
        expectNothingRepaired(reopened.recoveryReport)
        for (n, i) in changed.enumerated() {
            let expected: [Data]? = [nil, [Data("changed".utf8)], [Data("again".utf8)]][n % 3]
            #expect(try reopened.data(forKey: Self.longKey(i)) == expected, "key \(i)")
        }
        #expect(try reopened.data(forKey: "brand-new") == [Data("new".utf8)])
        #expect(try reopened.data(forKey: Self.longKey(1)) == [Data("v1".utf8)])
        let removed = changed.enumerated().filter { $0.offset % 3 == 0 }.count
        #expect(try reopened.keys().count == count - removed + 1)
    }

    /// `compact()` rewrites the journal too, whether or not redundant lines outnumber the
    /// entries yet: one `CLEAN` record per entry is left, and what it says reopens.
    @Test(arguments: bothStorages)
    func compactLeavesOneLinePerEntry(storage: DiskLRUCache.Storage) throws {
        let cache = try open(storage)
        for i in 0..<300 { try cache.setData([Data("v\(i)".utf8)], forKey: Self.key(i)) }
        for i in 0..<100 { try cache.setData([Data("w\(i)".utf8)], forKey: Self.key(i)) }
        for i in 0..<50 { _ = try cache.data(forKey: Self.key(i)) }
        #expect(try cache.removeValue(forKey: Self.key(299)))
        let before = try JournalFixture.bodyLines(in: directory.url)
        // 400 commits (and, in file storage, their DIRTY lines and 50 READ lines; packed
        // storage journals no reads), a removal: not due.
        #expect(before.count > (storage == .files ? 450 : 400))
        try cache.compact()
        let after = try JournalFixture.bodyLines(in: directory.url)
        #expect(after.count == 299)
        #expect(after.allSatisfy { $0.hasPrefix("CLEAN ") })
        // Packed storage writes them as blocks of 32 entries (`JournalBlock`); file storage
        // keeps the Java format.
        #expect(try JournalFixture.blockLineCount(in: directory.url) == (storage == .files ? 0 : (299 + 31) / 32))
        // The order is the LRU order: the 50 read last come last.
        #expect(after.suffix(50).allSatisfy { line in (0..<50).contains { line.contains(" \(Self.key($0)) ") } })
        cache.simulateCrash()
        let reopened = try open(storage)
        #expect(try reopened.keys() == ((100..<299).map(Self.key) + (50..<100).map(Self.key) + (0..<50).map(Self.key)))
        #expect(try reopened.data(forKey: Self.key(7)) == [Data("w7".utf8)])
        #expect(try reopened.data(forKey: Self.key(200)) == [Data("v200".utf8)])
    }

    @Test(arguments: bothStorages)
    func aRebuildWhoseWriteFailsLeavesTheOldJournalInUse(storage: DiskLRUCache.Storage) throws {
        let cache = try open(storage)
        let hold = try startHeldRebuild(cache)
        let before = try journalBytes()
        hold.release(failingWith: ENOSPC)
        cache.waitForBackgroundWork()
        // The reads after the one that began the rebuild claimed another pass, which rebuilt
        // the journal; the failed one left no file and did not break the journal.
        #expect(!cache.hasJournalErrors)
        #expect(!JournalFixture.fileExists("journal.tmp", in: directory.url))
        // The journal still takes writes.
        try cache.setData([Data("after".utf8)], forKey: "added-after-failure")
        _ = try cache.data(forKey: Self.key(3))
        cache.waitForBackgroundWork()
        #expect(try journalBytes() < before)
        try cache.close()

        let reopened = try openCache(directory.url, valueCount: 1, storage: storage)
        #expect(try reopened.keys().count == Self.entryCount + 1)
        #expect(try reopened.data(forKey: "added-after-failure") == [Data("after".utf8)])
    }

    @Test(arguments: bothStorages)
    func closeWaitsForARebuildInFlight(storage: DiskLRUCache.Storage) throws {
        let cache = try open(storage)
        let hold = try startHeldRebuild(cache)
        let closed = onNewThread {
            do { try cache.close() } catch { Issue.record("close failed: \(error)") }
        }
        hold.release()
        #expect(closed.wait(timeout: .now() + 30) == .success)
        #expect(!JournalFixture.fileExists("journal.tmp", in: directory.url))
        let reopened = try openCache(directory.url, valueCount: 1, storage: storage)
        #expect(try reopened.keys().count == Self.entryCount)
        expectNothingRepaired(reopened.recoveryReport)
    }

    @Test(arguments: bothStorages)
    func aSynchronousRebuildDuringOneInFlightWins(storage: DiskLRUCache.Storage) throws {
        let cache = try open(storage)
        let hold = try startHeldRebuild(cache)
        // `flush()` rebuilds the journal itself (under the lock) while the background one waits.
        let finished = finishesWhileHeld {
            #expect(try cache.removeValue(forKey: Self.key(5)))
            try cache.flush()
        }
        let flushed = try journalBytes()
        hold.release()
        #expect(finished)
        cache.waitForBackgroundWork()
        // The background rebuild, stale, was dropped: the journal is the one `flush()` wrote.
        #expect(try journalBytes() == flushed)
        #expect(!JournalFixture.fileExists("journal.tmp", in: directory.url))
        try cache.close()
        let reopened = try openCache(directory.url, valueCount: 1, storage: storage)
        #expect(try reopened.keys().count == Self.entryCount - 1)
        #expect(try reopened.data(forKey: Self.key(5)) == nil)
    }

    /// A fault at each system call of a rebuild's last step: the call, and a part of the path
    /// it names (the calls that take no path match any).
    static let swapFaults: [(call: String, path: String?)] = [
        ("write", nil),  // the snapshot's write, or the kept lines'
        ("close", nil),  // journal.tmp's close
        ("rename", "/journal"),  // journal → journal.bkp
        ("rename", "journal.tmp"),  // journal.tmp → journal
        ("open", "/journal"),  // opening the new journal to append
    ]

    @Test(arguments: swapFaults.indices, bothStorages)
    func aFaultWhileARebuildIsSwappedInLosesNothing(fault: Int, storage: DiskLRUCache.Storage) throws {
        let (call, path) = Self.swapFaults[fault]
        let cache = try open(storage)
        let hold = try startHeldRebuild(cache)
        #expect(
            finishesWhileHeld {
                try cache.setData([Data("during".utf8)], forKey: "added-during-rebuild")
                // A READ line stays buffered (they are written 8 KiB at a time) when the swap
                // fails: a failed swap must drop it with the rest (debug builds check that no
                // line is buffered behind a failed write after every locked operation).
                _ = try cache.data(forKey: Self.key(1))
            })
        fileSystem.failCalls(named: [call], errno: EIO, pathContaining: path)
        hold.release()
        cache.waitForBackgroundWork()
        #expect(fileSystem.injectedFaults > 0, "no \(call) failed")
        fileSystem.heal()
        // The next write repairs the journal if the fault broke it.
        try cache.setData([Data("after".utf8)], forKey: "added-after-fault")
        #expect(!cache.hasJournalErrors)
        cache.simulateCrash()

        let reopened = try openCache(directory.url, valueCount: 1, storage: storage)
        #expect(!reopened.recoveryReport.wasWiped)
        #expect(try reopened.keys().count == Self.entryCount + 2)
        for i in [0, 1, Self.entryCount / 2, Self.entryCount - 1] {
            #expect(try reopened.data(forKey: Self.key(i)) == [Data("v\(i)".utf8)])
        }
        #expect(try reopened.data(forKey: "added-during-rebuild") == [Data("during".utf8)])
        #expect(try reopened.data(forKey: "added-after-fault") == [Data("after".utf8)])
        // The open swept what the crash left; a rebuild it started may be writing journal.tmp.
        reopened.waitForBackgroundWork()
        #expect(try JournalFixture.fileNames(in: directory.url).filter { $0.hasSuffix(".tmp") } == [])
    }
}
