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

/// Reads buffer their `READ` lines; the reader that fills the buffer writes it after releasing
/// the cache lock, holding only the journal's output lock: other readers go on meanwhile, and
/// whatever is journaled next is written after those lines. File storage only: packed storage
/// journals no reads (``PackedReadsWriteNothingTests``).
@Suite(.tags(.concurrency)) struct ReadLinesOutsideTheLockTests {
    let directory = TemporaryDirectory()
    let fileSystem = FaultInjectingFileSystem()
    /// Few enough entries that their `DIRTY` lines and the reads below (about 480 fill the
    /// 8 KiB buffer) stay under the 2,000 redundant lines that call for a journal rebuild.
    static let entryCount = 1_000
    /// Larger than any write of this test but a flush of buffered `READ` lines.
    static let flushSize = 4_096

    static func key(_ i: Int) -> String { "key-\(1_000_000 + i)" }
    static func value(_ i: Int) -> [Data] { [Data("v\(i)".utf8)] }

    func open(_ storage: DiskLRUCache.Storage) throws -> DiskLRUCache {
        try DiskLRUCache(
            directory: directory.url, appVersion: testAppVersion, valueCount: 1, maxSize: Int.max,
            options: DiskLRUCache.Options(storage: storage), fileSystem: fileSystem)
    }

    /// Fills the cache, then reads on another thread until its write of the buffered `READ`
    /// lines is held. Returns the hold and the reading thread's completion.
    func startHeldReadFlush(_ cache: DiskLRUCache) throws -> (CallHold, DispatchSemaphore) {
        for i in 0..<Self.entryCount { try cache.setData(Self.value(i), forKey: Self.key(i)) }
        cache.waitForBackgroundWork()
        let hold = fileSystem.holdNextWrite(largerThan: Self.flushSize)
        let reader = onNewThread {
            // The first key is read until the buffer is full: the held write follows it.
            for _ in 0..<1_000 {
                do {
                    guard try cache.data(forKey: Self.key(0)) == Self.value(0) else {
                        Issue.record("wrong value read")
                        return
                    }
                } catch let error as CacheError where error.code == .cacheClosed && hold.isHeld {
                    // The read whose lines were held finishes after the test closed the cache.
                    return
                } catch {
                    Issue.record("read failed: \(error)")
                    return
                }
                if hold.isHeld { return }
            }
        }
        try #require(hold.waitUntilHeld(), "no flush of READ lines was written")
        return (hold, reader)
    }

    @Test(arguments: [DiskLRUCache.Storage.files])
    func readersGoOnWhileReadLinesAreWritten(storage: DiskLRUCache.Storage) throws {
        let cache = try open(storage)
        let (hold, reader) = try startHeldReadFlush(cache)
        // Before, the flush was written under the cache lock: these reads waited for it.
        let others = onNewThread {
            for i in 1..<200 {
                #expect((try? cache.data(forKey: Self.key(i))) == Self.value(i))
            }
            #expect(cache.size > 0)
        }
        let finished = others.wait(timeout: .now() + 30) == .success
        hold.release()
        #expect(finished, "readers waited for another reader's journal write")
        #expect(reader.wait(timeout: .now() + 30) == .success)
        try cache.close()
    }

    @Test(arguments: [DiskLRUCache.Storage.files])
    func whatIsJournaledNextIsWrittenAfterTheReadLines(storage: DiskLRUCache.Storage) throws {
        let cache = try open(storage)
        let (hold, reader) = try startHeldReadFlush(cache)
        let removed = onNewThread {
            #expect((try? cache.removeValue(forKey: Self.key(0))) == true)
        }
        // The removal's line waits for the held write: it must still be waiting.
        #expect(removed.wait(timeout: .now() + 0.2) == .timedOut, "a journal line overtook the READ lines")
        hold.release()
        #expect(removed.wait(timeout: .now() + 30) == .success)
        #expect(reader.wait(timeout: .now() + 30) == .success)
        let lines = try JournalFixture.bodyLines(in: directory.url)
        let lastRead = try #require(lines.lastIndex(of: "READ \(Self.key(0))"))
        let removal = try #require(lines.firstIndex(of: "REMOVE \(Self.key(0))"))
        #expect(lastRead < removal)
        cache.simulateCrash()
        // That journal replayed after a crash (by the Java rules): the key is gone, the rest there.
        let reopened = try openCache(directory.url, valueCount: 1, storage: storage)
        #expect(try reopened.data(forKey: Self.key(0)) == nil)
        #expect(try reopened.keys().count == Self.entryCount - 1)
    }

    @Test(arguments: [DiskLRUCache.Storage.files])
    func aFailedWriteOfReadLinesBreaksTheJournalUntilARebuildRepairsIt(storage: DiskLRUCache.Storage) throws {
        let cache = try open(storage)
        let (hold, reader) = try startHeldReadFlush(cache)
        // An I/O error (a full disk, in packed storage, is absorbed by the space reserve).
        hold.release(failingWith: EIO)
        #expect(reader.wait(timeout: .now() + 30) == .success)
        // The failure, made outside the cache lock, is the cache's as soon as it looks.
        #expect(cache.hasJournalErrors)
        // The next write rebuilds the journal first, and the journal is healthy again.
        try cache.setData([Data("after".utf8)], forKey: "added-after-failure")
        #expect(!cache.hasJournalErrors)
        cache.simulateCrash()
        let reopened = try openCache(directory.url, valueCount: 1, storage: storage)
        #expect(try reopened.keys().count == Self.entryCount + 1)
        #expect(try reopened.data(forKey: "added-after-failure") == [Data("after".utf8)])
        #expect(try reopened.data(forKey: Self.key(Self.entryCount - 1)) == Self.value(Self.entryCount - 1))
        #expect(!reopened.recoveryReport.wasWiped)
    }

    @Test(arguments: [DiskLRUCache.Storage.files])
    func closeWaitsForReadLinesBeingWritten(storage: DiskLRUCache.Storage) throws {
        let cache = try open(storage)
        let (hold, reader) = try startHeldReadFlush(cache)
        let closed = onNewThread {
            do { try cache.close() } catch { Issue.record("close failed: \(error)") }
        }
        #expect(closed.wait(timeout: .now() + 0.2) == .timedOut, "close did not wait for the journal write")
        hold.release()
        #expect(closed.wait(timeout: .now() + 30) == .success)
        #expect(reader.wait(timeout: .now() + 30) == .success)
        let lines = try JournalFixture.bodyLines(in: directory.url)
        // The held write is a full 8 KiB buffer of READ lines (packed lines carry an 18-byte check).
        let lineBytes = "READ \(Self.key(0))\n".utf8.count + (storage.inlineLimit == nil ? 0 : 18)
        #expect(lines.filter { $0 == "READ \(Self.key(0))" }.count >= (8 << 10) / lineBytes * 4 / 5)
        let reopened = try openCache(directory.url, valueCount: 1, storage: storage)
        #expect(try reopened.keys().count == Self.entryCount)
        #expect(reopened.recoveryReport.loadedSavedIndex)
    }
}
