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

/// `close()` returns only when nothing of the cache will touch its directory any more: another
/// cache (or the Java library) may open it at once.
@Suite(.tags(.concurrency)) struct CloseTests {
    let directory = TemporaryDirectory()
    let fileSystem = FaultInjectingFileSystem()

    /// File storage, where the first write of a set is the journal's `DIRTY` line; what close
    /// waits for is the same in both storages.
    @Test func closeWaitsForTrashAnotherThreadIsUnlinking() throws {
        let cache = try DiskLRUCache(
            directory: directory.url, appVersion: testAppVersion, valueCount: 2, maxSize: Int.max,
            fileSystem: fileSystem)
        try cache.set("a", "a", "a")
        // A journal write fails: the next write repairs the journal by rebuilding it under the
        // lock, and unlinks the old one (renamed to trash) after the lock is released: held.
        fileSystem.failCalls(named: ["write"], errno: EIO, pathContaining: nil)
        #expect(throws: CacheError.self) { try cache.set("b", "b", "b") }
        // The background pass that the failure claimed tries the repair first, and fails: the
        // repair is left to the next write, on this test's thread.
        cache.waitForBackgroundWork()
        #expect(cache.hasJournalErrors)
        fileSystem.heal()
        let hold = fileSystem.holdNextUnlink(pathContaining: "journal.bkp.")
        // The write goes on after its trash is unlinked; the close may come first, and then it
        // fails as any write to a closed cache does.
        let outcome = LockedState<CacheError.Code??>(nil)
        let written = onNewThread {
            var code: CacheError.Code? = nil
            do {
                try cache.setData([Data("c".utf8), Data("c".utf8)], forKey: "c")
            } catch {
                code = (error as? CacheError)?.code ?? .ioFailure
            }
            outcome.withLock { $0 = .some(code) }
        }
        try #require(hold.waitUntilHeld(), "the repair unlinked no trash")
        let closed = onNewThread { #expect((try? cache.close()) != nil) }
        // While the trash is still being unlinked, close() must not return. (A wait that is
        // expected to time out: what it waits for must not happen.)
        #expect(closed.wait(timeout: .now() + 0.5) == .timedOut, "close() returned before the trash was unlinked")
        hold.release()
        #expect(closed.wait(timeout: .now() + 30) == .success)
        #expect(written.wait(timeout: .now() + 30) == .success)
        #expect(try JournalFixture.fileNames(in: directory.url).filter { $0.hasSuffix(".tmp") } == [])
        let reopened = try openCache(directory.url)
        switch outcome.withLock({ $0 }) {
        case .some(nil): #expect(try reopened.keys().sorted() == ["a", "c"])
        case .some(let code?):
            #expect(code == .cacheClosed)
            #expect(try reopened.keys() == ["a"])
        case nil: Issue.record("the write did not finish")
        }
    }
}
