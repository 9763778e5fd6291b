import Dispatch
import Foundation
import SwiftyCacheCodable
import SwiftyCacheCore
import SwiftyCacheTestSupport
import Testing

/// Object caches that share their directory (`sharing: .processes`): two in one process hold
/// separate descriptors and locks, as two processes would. Each one's memory drops what the
/// other changes, and its changes report the other's writes by key.
@Suite(.tags(.concurrency)) struct ObjectCacheSharingTests {
    let directory = TemporaryDirectory()

    private func open(memoryLimit: Int = 100) throws -> ObjectCache<String, String> {
        var configuration = ObjectCacheConfiguration(memoryLimit: memoryLimit)
        configuration.sharing = .processes
        return try ObjectCache<String, String>(directory: directory.url, configuration: configuration)
    }

    @Test func aValueTheOtherReplacedIsNotServedFromMemory() async throws {
        let first = try open()
        let second = try open()
        try await first.set("one", forKey: "k")
        #expect(try await first.value(forKey: "k") == "one")  // in first's memory
        #expect(try await second.value(forKey: "k") == "one")
        let changes = first.changes()
        try await second.set("two", forKey: "k")
        // The change reaches `first` once its memory dropped the old value.
        #expect(await collect(1, from: changes) == [ObjectCacheChange(key: "k", kind: .set)])
        #expect(try await first.value(forKey: "k") == "two")
        _ = try await second.removeValue(forKey: "k")
        #expect(await collect(1, from: changes) == [ObjectCacheChange(key: "k", kind: .removed)])
        #expect(try await first.value(forKey: "k") == nil)
    }

    @Test func theOthersWritesComeWithTheirKeysEvenIfNeverReadHere() async throws {
        let first = try open()
        let second = try open()
        let changes = first.changes()
        // One at a time: changes of one key waiting together are folded into the last.
        try await second.set("a", forKey: "https://example.com/a")
        #expect(await collect(1, from: changes) == [ObjectCacheChange(key: "https://example.com/a", kind: .set)])
        try await second.set("b", forKey: "https://example.com/b")
        #expect(await collect(1, from: changes) == [ObjectCacheChange(key: "https://example.com/b", kind: .set)])
        _ = try await second.removeValue(forKey: "https://example.com/a")
        #expect(
            await collect(1, from: changes) == [ObjectCacheChange(key: "https://example.com/a", kind: .removed)])
    }

    @Test func saveIsLastWriterWins() async throws {
        let first = try open()
        let second = try open()
        // The directory's first batch rewrites its journal once (its header then says that it
        // holds batches), which the other reads as `cleared`: done before the test proper.
        try await first.set(contentsOf: [(key: "other", value: "x")])
        first.setUnsaved("mine, unsaved", forKey: "k")
        let changes = first.changes()
        try await second.set("theirs", forKey: "k")
        #expect(await collect(1, from: changes) == [ObjectCacheChange(key: "k", kind: .set)])
        // The unsaved value stays until its save, which writes over theirs.
        #expect(try await first.value(forKey: "k") == "mine, unsaved")
        let secondChanges = second.changes()
        try await first.save()
        let got = await collect(1, from: secondChanges)
        #expect(got == [ObjectCacheChange(key: "k", kind: .set)], "\(got)")
        #expect(try await second.value(forKey: "k") == "mine, unsaved")
        #expect(try await first.value(forKey: "k") == "mine, unsaved")
    }

    @Test func valuesLargerThanTheDefaultInlineLimitAreKept() async throws {
        let first = try open()
        let second = try open()
        let large = String(repeating: "x", count: 200_000)
        try await first.set(large, forKey: "large")
        #expect(try await second.value(forKey: "large") == large)
    }

    @Test func aReadThatRacedTheOthersWriteKeepsNothingInMemory() async throws {
        let fileSystem = FaultInjectingFileSystem()
        var configuration = ObjectCacheConfiguration()
        configuration.sharing = .processes
        let reader = try ObjectCache<String, String>(
            directory: directory.url, configuration: configuration, fileSystem: fileSystem)
        let writer = try open()
        let changes = reader.changes()
        try await writer.set("old", forKey: "k")
        // The reader's read of the record (not the journal's 64 KiB chunks) stops once it has
        // the old bytes; the writer replaces the value, and the reader follows that.
        // Caught up with the first write (its change delivered), then memory emptied: the next
        // read goes to the disk, and nothing else reads a record meanwhile.
        #expect(await collect(1, from: changes) == [ObjectCacheChange(key: "k", kind: .set)])
        #expect(try await reader.value(forKey: "k") == "old")
        reader.trimMemory(.critical)
        let hold = fileSystem.holdNextRead(ofSizeIn: 20..<60_000)
        let readDone = onNewThread { _ = try? reader.value(forKey: "k") }
        #expect(hold.waitUntilHeld())
        try await writer.set("new", forKey: "k")
        #expect(await collect(1, from: changes) == [ObjectCacheChange(key: "k", kind: .set)])
        hold.release()
        readDone.wait()
        // The old value read before the change must not be what memory keeps now.
        #expect(try await reader.value(forKey: "k") == "new")
    }

    @Test func readersOfOneNeverKeepAValueTheOtherReplaced() async throws {
        let reader = try open()
        let writer = try open()
        let changes = reader.changes()
        let rounds = 200
        let stop = LockedState(false)
        let stale = LockedState(0)
        // Readers load the key into memory over and over while the other cache replaces it.
        let readers = (0..<2).map { _ in
            onNewThread {
                while !stop.withLock({ $0 }) { _ = try? reader.value(forKey: "k") }
            }
        }
        for round in 0..<rounds { try await writer.set("v\(round)", forKey: "k") }
        try await writer.set("", forKey: "done")
        // Changes come in the order of each key's last change: once `done` is here, the
        // reader has followed every write of `k`.
        let done = await collect(1, from: changes.filter { $0.key == "done" })
        #expect(done.count == 1)
        stop.withLock { $0 = true }
        for done in readers { done.wait() }
        if try await reader.value(forKey: "k") != "v\(rounds - 1)" { stale.withLock { $0 += 1 } }
        #expect(stale.withLock { $0 } == 0)
    }
}
