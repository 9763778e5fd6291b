import Foundation
import SwiftyCacheTestSupport
import Testing

@testable import SwiftyCacheCore

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Disk faults are errors with context and states the cache recovers from, never crashes.
@Suite struct FaultTests {
    let directory = TemporaryDirectory()
    let fileSystem = FaultInjectingFileSystem()

    func open(maxSize: Int = Int.max) throws -> DiskLRUCache {
        try DiskLRUCache(
            directory: directory.url, appVersion: testAppVersion, valueCount: 2, maxSize: maxSize,
            fileSystem: fileSystem)
    }

    @Test func diskFullWhileWritingAValueKeepsThePreviousValues() throws {
        let cache = try open()
        try cache.set("k", "old0", "old1")
        fileSystem.failCalls(named: ["write"], errno: ENOSPC, pathContaining: nil)
        do {
            try cache.set("k", "new0", "new1")
            Issue.record("no error")
        } catch let error as CacheError {
            // The first failing write is the value file's or the DIRTY line's; either is reported with context.
            #expect(error.code == .ioFailure || error.code == .journalUnavailable)
            #expect(error.key == "k")
            #expect(error.path != nil)
            #expect(error.description.contains("No space left on device"))
        }
        fileSystem.heal()
        #expect(try cache.strings("k") == ["old0", "old1"])
        try cache.set("k", "new0", "new1")
        #expect(try cache.strings("k") == ["new0", "new1"])
        // The journal's failure scheduled a background rebuild, whose `journal.tmp` exists
        // while it runs: the check is of what is left once it is done.
        cache.waitForBackgroundWork()
        #expect(try JournalFixture.fileNames(in: directory.url).allSatisfy { !$0.hasSuffix(".tmp") })
    }

    @Test func journalFailureRefusesEditsUntilARebuildSucceedsWhileReadsAndRemovalsWork() throws {
        let cache = try open()
        try cache.set("a", "a", "a")
        try cache.set("z", "z", "z")
        // Every journal write and every attempt to rebuild it fails.
        fileSystem.failCalls(named: ["write", "open"], errno: EIO, pathContaining: nil)
        // A write's DIRTY line, which goes out before any value file, cannot be written: the
        // journal is broken.
        expectError(.ioFailure) { try cache.set("b", "b", "b") }
        #expect(cache.hasJournalErrors)
        expectError(.journalUnavailable) { try cache.edit(forKey: "b") }
        expectError(.journalUnavailable) { try cache.set("c", "c", "c") }
        fileSystem.failCalls(named: ["write"], errno: EIO, pathContaining: nil)  // opening works again
        #expect(try cache.strings("a") == ["a", "a"])  // reads keep working
        // A removal still frees its space: the files go first, then the entry.
        #expect(try cache.removeValue(forKey: "z"))
        #expect(!JournalFixture.fileExists("z.0", in: directory.url))
        #expect(try cache.strings("z") == nil)
        #expect(cache.hasJournalErrors)
        fileSystem.heal()
        try cache.set("c", "c", "c")  // the retried rebuild succeeds first
        #expect(!cache.hasJournalErrors)
        try cache.close()
        let reopened = try openCache(directory.url)
        #expect(try reopened.keys().sorted() == ["a", "c"])
        #expect(reopened.size == 4)
    }

    @Test func aFileThatCouldNotBeDeletedStaysTheCachesThroughAJournalRebuild() throws {
        let cache = try open()
        try cache.set("k1", "A", "B")
        try cache.set("k2", "C", "D")
        fileSystem.failCalls(named: ["unlink"], errno: EIO, pathContaining: "/k1.0")
        #expect(try cache.removeValue(forKey: "k1"))  // removed from the index; k1.0 could not be deleted
        fileSystem.heal()
        // Enough reads for the journal to be rebuilt: k1's REMOVE line would be compacted away.
        for _ in 0..<2_100 { _ = try cache.strings("k2") }
        cache.waitForBackgroundWork()
        #expect(try JournalFixture.bodyLines(in: directory.url).first == "REMOVE k1")
        cache.simulateCrash()
        let reopened = try open()
        #expect(reopened.recoveryReport.unknownFiles == [])
        #expect(!JournalFixture.fileExists("k1.0", in: directory.url))
        #expect(try reopened.strings("k2") == ["C", "D"])
    }

    @Test func renameFailureOfTheFirstSlotKeepsThePreviousValues() throws {
        let cache = try open()
        try cache.set("k", "old0", "old1")
        fileSystem.failCalls(named: ["rename"], errno: EIO, pathContaining: "k.0.tmp")
        expectError(.ioFailure) { try cache.set("k", "new0", "new1") }
        fileSystem.heal()
        #expect(try cache.strings("k") == ["old0", "old1"])
        #expect(try JournalFixture.fileNames(in: directory.url) == ["journal", "journal.lock", "k.0", "k.1"])
    }

    @Test func renameFailureAfterTheFirstSlotDropsTheEntryRatherThanMixingValues() throws {
        let cache = try open()
        try cache.set("k", "old0", "old1")
        fileSystem.failCalls(named: ["rename"], errno: EIO, pathContaining: "k.1.tmp")
        expectError(.ioFailure) { try cache.set("k", "new0", "new1") }
        fileSystem.heal()
        #expect(try cache.strings("k") == nil)
        // The failed editor let go of the key.
        try cache.set("k", "again0", "again1")
        #expect(try cache.strings("k") == ["again0", "again1"])
        try cache.removeValue(forKey: "k")
        try cache.close()
        #expect(try openCache(directory.url).strings("k") == nil)
    }

    @Test func failedCleanLineDropsTheEntryInMemoryAsOnDisk() throws {
        let cache = try open()
        // Fail the 5th call of a set: open, write, close, open, write, close for the two values,
        // then DIRTY was written before; the first journal write after the renames is CLEAN.
        let editor = try #require(try cache.edit(forKey: "k"))
        try editor.setString("a", at: 0)
        try editor.setString("b", at: 1)
        fileSystem.failCalls(named: ["write"], errno: EIO, pathContaining: nil)
        expectError(.ioFailure) { try editor.commit() }
        fileSystem.heal()
        #expect(try cache.snapshot(forKey: "k") == nil)
        try cache.close()
        let reopened = try openCache(directory.url)
        #expect(try reopened.snapshot(forKey: "k") == nil)
        #expect(reopened.size == 0)
    }
}

/// A packed commit has no `DIRTY` line: when its `CLEAN` line (or, with `syncsWrites`, the sync
/// after it) fails, the entry goes back to the record it replaced, which the journal on disk
/// still names. The broken journal's repair writes it again, with a `TAIL` line past the failed
/// record; until then every call that needs the journal throws (an outside power-cut run once
/// saw a removal return before the repair and the old value come back).
@Suite struct FailedPackedCommitTests {
    let directory = TemporaryDirectory()
    let fileSystem = FaultInjectingFileSystem()

    func open(syncsWrites: Bool) throws -> DiskLRUCache {
        try DiskLRUCache(
            directory: directory.url, appVersion: testAppVersion, valueCount: 2, maxSize: 1 << 20,
            options: DiskLRUCache.Options(syncsWrites: syncsWrites, storage: .packed), fileSystem: fileSystem)
    }

    @Test(arguments: [false, true])
    func aRemovalAfterAFailedCommitThrowsUntilTheJournalIsRepaired(syncsWrites: Bool) throws {
        let cache = try open(syncsWrites: syncsWrites)
        try cache.set("k", "old0", "old1")
        // The journal cannot be rebuilt while this lasts (by this thread or by the cleanup
        // that a broken journal schedules).
        fileSystem.failCalls(named: ["open"], errno: EIO, pathContaining: "journal.tmp")
        // The record's append (and with `syncsWrites` its sync, which makes it durable in the
        // log) succeeds; the journal's line fails. The repair must end the log past the record,
        // or an open after a crash would read it back.
        fileSystem.failCall(named: "write", occurrence: 2, errno: EIO)
        expectError(.ioFailure) { try cache.set("k", "new0", "new1") }
        #expect(try cache.strings("k") == ["old0", "old1"], "the failed set leaves the value it meant to replace")
        expectError(.journalUnavailable) { try cache.removeValue(forKey: "k") }
        expectError(.journalUnavailable) { try cache.evictAll() }
        expectError(.journalUnavailable) { try cache.set("other", "a", "b") }
        #expect(try cache.strings("k") == ["old0", "old1"])
        fileSystem.heal()
        #expect(try cache.removeValue(forKey: "k"))
        #expect(!cache.hasJournalErrors)
        // Killed now: the journal on disk agrees with what the calls returned.
        cache.simulateCrash()
        let reopened = try open(syncsWrites: syncsWrites)
        #expect(try reopened.strings("k") == nil)
        #expect(reopened.count == 0)
    }

    /// The failed set's record stays in the segment (with `syncsWrites`, durable in the log);
    /// once the journal is repaired, a crash brings back the value the last set that returned
    /// wrote, never the failed one and never nothing.
    @Test(arguments: [false, true])
    func aFailedCommitLeavesThePreviousValueThroughARepairAndACrash(syncsWrites: Bool) throws {
        let cache = try open(syncsWrites: syncsWrites)
        try cache.set("k", "old0", "old1")
        let live = try #require(cache.storage.compactingStorage?.liveBytes)
        fileSystem.failCall(named: "write", occurrence: 2, errno: EIO)
        expectError(.ioFailure) { try cache.set("k", "new0", "new1") }
        fileSystem.heal()
        #expect(try cache.strings("k") == ["old0", "old1"])
        // The old record counts as live again, the failed one as garbage.
        #expect(cache.storage.compactingStorage?.liveBytes == live)
        // The next write repairs the journal first.
        try cache.set("other", "a", "b")
        #expect(!cache.hasJournalErrors)
        #expect(cache.size == 10)
        cache.simulateCrash()
        let reopened = try open(syncsWrites: syncsWrites)
        #expect(try reopened.strings("k") == ["old0", "old1"])
        #expect(try reopened.strings("other") == ["a", "b"])
        #expect(reopened.count == 2)
        // A batch whose line fails goes back the same way, a key it created is dropped; a key it
        // sets twice goes back past both.
        let liveBeforeBatch = try #require(reopened.storage.compactingStorage?.liveBytes)
        fileSystem.failCall(named: "write", occurrence: 2, errno: EIO)
        var batch = DiskLRUCache.WriteBatch()
        batch.setData([Data("b0".utf8), Data("b1".utf8)], forKey: "k")
        batch.setData([Data("n0".utf8), Data("n1".utf8)], forKey: "created")
        batch.setData([Data("c0".utf8), Data("c1".utf8)], forKey: "k")
        batch.setData([Data("m0".utf8), Data("m1".utf8)], forKey: "created")
        expectError(.ioFailure) { try reopened.write(batch) }
        fileSystem.heal()
        #expect(try reopened.strings("k") == ["old0", "old1"])
        #expect(try reopened.strings("created") == nil)
        #expect(reopened.size == 10)
        #expect(reopened.storage.compactingStorage?.liveBytes == liveBeforeBatch)
        try reopened.close()
        let again = try open(syncsWrites: syncsWrites)
        #expect(try again.strings("k") == ["old0", "old1"])
        #expect(try again.strings("created") == nil)
        #expect(again.count == 2)
    }
}
