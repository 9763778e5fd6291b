import Foundation
import SwiftyCacheCore
import SwiftyCacheTestSupport
import Testing

/// Packed storage with `syncsWrites`: the segments are the directory's log. A durable commit
/// syncs its segment alone; its journal line follows unsynced, and an open after a crash that
/// lost the line reads the commit back from the log past the journal's last `TAIL` line. The
/// lost lines are simulated by cutting the journal back to a size it had (what a power cut
/// leaves of a file whose last writes were never synced).
@Suite struct SegmentLogTests {
    let directory = TemporaryDirectory()

    func open(syncsWrites: Bool = true, maxSize: Int = Int.max) throws -> DiskLRUCache {
        try DiskLRUCache(
            directory: directory.url, appVersion: testAppVersion, valueCount: 2, maxSize: maxSize,
            options: DiskLRUCache.Options(syncsWrites: syncsWrites, storage: .packed))
    }

    func pair(_ text: String) -> [Data] { [Data("\(text)-0".utf8), Data("\(text)-1".utf8)] }

    var journalURL: URL { directory.url.appending(path: "journal") }

    func journalSize() throws -> Int { try Data(contentsOf: journalURL).count }

    /// Cuts the journal back to `size` bytes: the lines written after it never reached the disk.
    func loseJournal(after size: Int) throws {
        let handle = try FileHandle(forWritingTo: journalURL)
        try handle.truncate(atOffset: UInt64(size))
        try handle.close()
    }

    /// Kills `cache`, loses the journal's lines after `size` bytes, and opens the directory again.
    func reopenAfterCrash(_ cache: DiskLRUCache, losingJournalAfter size: Int) throws -> DiskLRUCache {
        cache.simulateCrash()
        try loseJournal(after: size)
        return try open()
    }

    /// The segment files, oldest first.
    func segments(in url: URL? = nil) throws -> [URL] {
        try FileManager.default.contentsOfDirectory(atPath: (url ?? directory.url).path(percentEncoded: false))
            .filter { $0.hasPrefix("segment-") }.sorted().map { (url ?? directory.url).appending(path: $0) }
    }

    func append(_ bytes: Data, to url: URL) throws {
        let handle = try FileHandle(forWritingTo: url)
        try handle.seekToEnd()
        try handle.write(contentsOf: bytes)
        try handle.close()
    }

    @Test func aDurableCommitWhoseLineWasLostIsReadBackFromTheLog() throws {
        let cache = try open()
        try cache.setData(pair("a"), forKey: "a")
        let kept = try journalSize()
        try cache.setData(pair("b"), forKey: "b")
        try cache.setData(pair("c1"), forKey: "c")
        try cache.setData(pair("c2"), forKey: "c")
        let reopened = try reopenAfterCrash(cache, losingJournalAfter: kept)
        #expect(reopened.recoveryReport.recoveredLoggedChanges == 3)
        #expect(try reopened.data(forKey: "a") == pair("a"))
        #expect(try reopened.data(forKey: "b") == pair("b"))
        #expect(try reopened.data(forKey: "c") == pair("c2"))
        #expect(reopened.count == 3)
        // Journaled before anything is exposed: a second crash keeps them.
        reopened.simulateCrash()
        let again = try open(syncsWrites: false)
        #expect(again.recoveryReport.recoveredLoggedChanges == 0)
        #expect(try again.data(forKey: "c") == pair("c2"))
        #expect(again.count == 3)
    }

    /// A short write leaves a torn record in the segment; a durable commit after it (a set, a
    /// set and a removal, a batch of both) must not be written past it, where the log's scan,
    /// which ends at the torn bytes, would never find it. The power cut keeps of each file what
    /// its last sync covered.
    @Test(arguments: ["set", "set and removal", "batch"]) func aCommitAfterATornAppendSurvivesAPowerCut(
        commits: String
    ) throws {
        let fileSystem = FaultInjectingFileSystem()
        fileSystem.recordSyncs()
        let cache = try DiskLRUCache(
            directory: directory.url, appVersion: testAppVersion, valueCount: 2, maxSize: Int.max,
            options: DiskLRUCache.Options(syncsWrites: true, storage: .packed), fileSystem: fileSystem)
        try cache.setData(pair("a"), forKey: "a")
        try cache.setData(pair("d"), forKey: "d")
        fileSystem.shortenNextWrite(largerThan: 16, keeping: 10, thenFailingWith: ENOSPC)
        #expect(throws: CacheError.self) { try cache.setData(pair("b"), forKey: "b") }
        if commits == "batch" {
            var batch = DiskLRUCache.WriteBatch()
            batch.setData(pair("c"), forKey: "c")
            batch.removeValue(forKey: "d")
            try cache.write(batch)
        } else {
            try cache.setData(pair("c"), forKey: "c")
            if commits == "set and removal" { #expect(try cache.removeValue(forKey: "d")) }
        }
        #expect(try cache.data(forKey: "c") == pair("c"))
        cache.simulateCrash()
        // The power cut: each file cut to what its last sync covered (what a failed sync should
        // have covered zeroed), unsynced files empty.
        let cut = try fileSystem.crashCopy(of: directory, powerCut: true)
        let reopened = try DiskLRUCache(
            directory: cut.url, appVersion: testAppVersion, valueCount: 2, maxSize: Int.max,
            options: DiskLRUCache.Options(syncsWrites: true, storage: .packed))
        #expect(try reopened.data(forKey: "a") == pair("a"))
        #expect(try reopened.data(forKey: "b") == nil)
        #expect(try reopened.data(forKey: "c") == pair("c"), "a durable commit lost past a torn record")
        let removed = commits != "set"
        #expect(try reopened.data(forKey: "d") == (removed ? nil : pair("d")), "a durable removal lost")
    }

    @Test func aLineThatDidReachTheDiskWinsOverAnOlderRecordInTheLog() throws {
        let cache = try open()
        try cache.setData(pair("old"), forKey: "k")
        let afterOld = try journalSize()
        try cache.setData(pair("new"), forKey: "k")
        try cache.setData(pair("other"), forKey: "other")
        cache.simulateCrash()
        // Only the line of "other" is lost.
        let lines = try Data(contentsOf: journalURL)
        let withoutLast = lines.dropLast().lastIndex(of: UInt8(ascii: "\n")).map { $0 + 1 } ?? lines.count
        #expect(withoutLast > afterOld)
        try loseJournal(after: withoutLast)
        let reopened = try open()
        #expect(reopened.recoveryReport.recoveredLoggedChanges == 1)
        #expect(try reopened.data(forKey: "k") == pair("new"))
        #expect(try reopened.data(forKey: "other") == pair("other"))
    }

    @Test func aRemovalThatReturnedStaysRemovedWhateverTheLogHolds() throws {
        let cache = try open()
        try cache.setData(pair("a"), forKey: "a")
        #expect(try cache.removeValue(forKey: "a"))
        let afterRemoval = try journalSize()
        try cache.setData(pair("b"), forKey: "b")
        let reopened = try reopenAfterCrash(cache, losingJournalAfter: afterRemoval)
        #expect(try reopened.data(forKey: "a") == nil)
        #expect(try reopened.data(forKey: "b") == pair("b"))
        #expect(reopened.count == 1)
    }

    @Test func aBatchIsReadBackWholeWithItsRemovals() throws {
        let cache = try open()
        try cache.setData(pair("a"), forKey: "a")
        let kept = try journalSize()
        var batch = DiskLRUCache.WriteBatch()
        batch.setData(pair("x"), forKey: "x")
        batch.removeValue(forKey: "a")
        batch.setData(pair("y"), forKey: "y")
        try cache.write(batch)
        let reopened = try reopenAfterCrash(cache, losingJournalAfter: kept)
        #expect(reopened.recoveryReport.recoveredLoggedChanges == 3)
        #expect(try reopened.data(forKey: "x") == pair("x"))
        #expect(try reopened.data(forKey: "y") == pair("y"))
        #expect(try reopened.data(forKey: "a") == nil)
    }

    @Test func aBatchCutInTheSegmentIsNotReadBackAtAll() throws {
        let cache = try open()
        try cache.setData(pair("a"), forKey: "a")
        let kept = try journalSize()
        let segment = try #require(try segments().last)
        let before = try Data(contentsOf: segment).count
        var batch = DiskLRUCache.WriteBatch()
        batch.setData(pair("x"), forKey: "x")
        batch.removeValue(forKey: "a")
        batch.setData(pair("y"), forKey: "y")
        try cache.write(batch)
        cache.simulateCrash()
        try loseJournal(after: kept)
        let after = try Data(contentsOf: segment).count
        #expect(after > before)
        // Every cut inside the batch leaves none of it.
        let whole = try Data(contentsOf: segment)
        for cut in stride(from: before + 1, to: after, by: 7) {
            try whole.prefix(cut).write(to: segment)
            let reopened = try open()
            #expect(reopened.recoveryReport.recoveredLoggedChanges == 0, "cut at \(cut)")
            #expect(try reopened.data(forKey: "x") == nil)
            #expect(try reopened.data(forKey: "a") == pair("a"))
            reopened.simulateCrash()
            try loseJournal(after: kept)
        }
    }

    @Test func aTornRecordEndsTheLogAndWhatCameBeforeItIsKept() throws {
        let cache = try open()
        let kept = try journalSize()
        try cache.setData(pair("b"), forKey: "b")
        try cache.setData(pair("c"), forKey: "c")
        cache.simulateCrash()
        try loseJournal(after: kept)
        let segment = try #require(try segments().last)
        let whole = try Data(contentsOf: segment)
        try whole.dropLast(3).write(to: segment)
        let reopened = try open()
        #expect(reopened.recoveryReport.recoveredLoggedChanges == 1)
        #expect(try reopened.data(forKey: "b") == pair("b"))
        #expect(try reopened.data(forKey: "c") == nil)
    }

    /// Bytes appended past the log by something else are never applied: a record whose own
    /// checksum holds but which carries no prefix (what a cache without `syncsWrites` writes),
    /// and the logged record of another cache (another identity).
    @Test(arguments: [false, true]) func recordsOfAnotherCacheInTheTailAreNeverApplied(logged: Bool) throws {
        let other = TemporaryDirectory()
        let otherCache = try DiskLRUCache(
            directory: other.url, appVersion: testAppVersion, valueCount: 2, maxSize: Int.max,
            options: DiskLRUCache.Options(syncsWrites: logged, storage: .packed))
        try otherCache.setData(pair("ghost"), forKey: "ghost")
        try otherCache.close()
        let otherSegment = try #require(try segments(in: other.url).last)
        let foreign = try Data(contentsOf: otherSegment).dropFirst(16)
        #expect(foreign.count > 0)

        let cache = try open()
        let kept = try journalSize()
        try cache.setData(pair("b"), forKey: "b")
        cache.simulateCrash()
        try loseJournal(after: kept)
        let segment = try #require(try segments().last)
        try append(Data(foreign), to: segment)
        let reopened = try open()
        #expect(try reopened.data(forKey: "b") == pair("b"))
        #expect(try reopened.data(forKey: "ghost") == nil)
        #expect(reopened.recoveryReport.recoveredLoggedChanges == 1)
    }

    /// A record with its prefix, whose key no journal line names: applied (it is a commit whose
    /// line was lost); the same bytes before the `TAIL` line: never read.
    @Test func theLogIsReadOnlyFromTheLastTailLine() throws {
        let cache = try open()
        try cache.setData(pair("early"), forKey: "early")
        try cache.close()
        // A clean close and a new session: its `TAIL` line is past "early".
        let second = try open()
        let kept = try journalSize()
        try second.setData(pair("late"), forKey: "late")
        second.simulateCrash()
        // The journal loses "late", and "early" too: only its record before the `TAIL` line has it.
        let text = try String(decoding: Data(contentsOf: journalURL), as: UTF8.self)
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false)
        let withoutEarly = lines.filter { !$0.hasPrefix("CLEAN early ") }.joined(separator: "\n")
        try Data(withoutEarly.utf8).prefix(kept - (text.utf8.count - withoutEarly.utf8.count)).write(to: journalURL)
        let reopened = try open()
        #expect(try reopened.data(forKey: "late") == pair("late"))
        #expect(try reopened.data(forKey: "early") == nil)
    }

    @Test func aSessionWithoutSyncsWritesKeepsTheLogSound() throws {
        let first = try open()
        try first.setData(pair("k"), forKey: "k")
        first.simulateCrash()
        // A session that does not sync: its removal must not be undone by the log it follows.
        let second = try open(syncsWrites: false)
        #expect(try JournalFixture.allLines(in: directory.url).first == JournalFixture.packedLogMagic)
        #expect(try second.removeValue(forKey: "k"))
        try second.setData(pair("n"), forKey: "n")
        second.simulateCrash()
        let third = try open(syncsWrites: false)
        #expect(try third.data(forKey: "k") == nil)
        #expect(try third.data(forKey: "n") == pair("n"))
    }

    @Test func aDirectoryWrittenWithoutSyncsWritesBecomesALogOnceAndKeepsItsValues() throws {
        let plain = try open(syncsWrites: false)
        for i in 0..<50 { try plain.setData(pair("v\(i)"), forKey: "k\(i)") }
        try plain.close()
        #expect(try JournalFixture.allLines(in: directory.url).first == JournalFixture.packedMagic)
        let durable = try open()
        #expect(try JournalFixture.allLines(in: directory.url).first == JournalFixture.packedLogMagic)
        for i in 0..<50 { #expect(try durable.data(forKey: "k\(i)") == pair("v\(i)")) }
        try durable.close()
        let again = try open(syncsWrites: false)
        #expect(try JournalFixture.allLines(in: directory.url).first == JournalFixture.packedLogMagic)
        #expect(again.count == 50)
    }

    @Test func theLogGetsATailLineAsItGrowsSoAnOpenReadsLittle() throws {
        let cache = try open()
        let tails = { try JournalFixture.allLines(in: directory.url).filter { $0.hasPrefix("TAIL ") }.count }
        let atOpen = try tails()
        // 20 MiB of records: two `TAIL` lines at least on the way.
        let value = Data(repeating: 0x61, count: 8 << 10)
        for i in 0..<1_280 { try cache.setData([value, value], forKey: "k\(i % 64)") }
        #expect(try tails() >= atOpen + 2)
    }

    @Test func getsLeaveTheJournalAndTheSegmentsAsTheyWere() throws {
        let cache = try open()
        for i in 0..<20 { try cache.setData(pair("v\(i)"), forKey: "k\(i)") }
        let journal = try journalSize()
        let segmentBytes = try segments().map { try Data(contentsOf: $0).count }
        for round in 0..<50 { _ = try cache.data(forKey: "k\(round % 20)") }
        #expect(try journalSize() == journal)
        #expect(try segments().map { try Data(contentsOf: $0).count } == segmentBytes)
    }
}
