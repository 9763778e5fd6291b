import Foundation
import SwiftyCacheTestSupport
import Testing

@testable import SwiftyCacheCore

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// `sharing: .processes`, sets appending under the operation lock held shared: several
/// writers' lines go to the journal at once, a torn line of a killed one is followed by whole
/// ones, and what the killed appender leaves is found by the next exclusive holder.
@Suite(.tags(.concurrency)) struct SharedAppendTests {
    let directory = TemporaryDirectory()

    func open(syncsWrites: Bool = false, fileSystem: FaultInjectingFileSystem? = nil) throws -> DiskLRUCache {
        var options = DiskLRUCache.Options(syncsWrites: syncsWrites, storage: .packed)
        options.sharing = .processes
        options.compactsInBackground = false
        if let fileSystem {
            return try DiskLRUCache(
                directory: directory.url, appVersion: testAppVersion, valueCount: 1, maxSize: 1 << 20,
                options: options, fileSystem: fileSystem)
        }
        return try DiskLRUCache(
            directory: directory.url, appVersion: testAppVersion, valueCount: 1, maxSize: 1 << 20, options: options)
    }

    func read(_ cache: DiskLRUCache, _ key: String) throws -> String? {
        try cache.data(forKey: key).map { String(decoding: $0[0], as: UTF8.self) }
    }

    var journalURL: URL { directory.url.appending(path: "journal") }

    /// A word of `journal.share`'s page (``SharedDirectoryLock/Word``).
    func word(_ word: SharedDirectoryLock.Word) throws -> UInt64 {
        let data = try Data(contentsOf: directory.url.appending(path: "journal.share"))
        return data.withUnsafeBytes { $0.loadUnaligned(fromByteOffset: word.rawValue * 8, as: UInt64.self) }
    }

    func setWord(_ word: SharedDirectoryLock.Word, _ value: UInt64) throws {
        let handle = try FileHandle(forWritingTo: directory.url.appending(path: "journal.share"))
        try handle.seek(toOffset: UInt64(word.rawValue * 8))
        try handle.write(contentsOf: withUnsafeBytes(of: value.littleEndian) { Data($0) })
        try handle.close()
    }

    @Test func setsAppendWhileAnotherHolderHasTheLockShared() throws {
        let cache = try open()
        try cache.setData([Data("one".utf8)], forKey: "a")
        let before = try word(.changeCount)
        // Another appender, in the middle of its append: a set does not wait for it (an
        // exclusive lock would, for 30 seconds, and then throw).
        let fd = Glibc.open(directory.url.appending(path: "journal.share").path, O_RDWR | O_CLOEXEC)
        #expect(fd >= 0)
        defer { _ = Glibc.close(fd) }
        #expect(flock(fd, LOCK_SH | LOCK_NB) == 0)
        try cache.setData([Data("two".utf8)], forKey: "b")
        try cache.setData([Data("three".utf8)], forKey: "a")
        #expect(flock(fd, LOCK_UN) == 0)
        #expect(try word(.changeCount) == before + 2)
        #expect(try word(.sharedAppenders) == 0)
        let size = try FileManager.default.attributesOfItem(atPath: journalURL.path)[.size] as? Int
        #expect(try word(.journalEnd) == UInt64(size ?? 0))
        #expect(try read(cache, "a") == "three")
        try cache.close()
        let reopened = try open()
        #expect(try read(reopened, "a") == "three")
        #expect(try read(reopened, "b") == "two")
    }

    /// What an appender killed in the middle of its `write` leaves: the start of its line at
    /// the journal's end, and itself still counted in the page.
    func leaveWhatAKilledAppenderLeaves(_ torn: [UInt8]) throws {
        let handle = try FileHandle(forWritingTo: journalURL)
        try handle.seekToEnd()
        try handle.write(contentsOf: torn)
        try handle.close()
        try setWord(.sharedAppenders, 1)
    }

    @Test func aLineTornByAKilledAppenderIsFollowedByWholeOnes() throws {
        let first = try open()
        let second = try open()
        try first.setData([Data("kept".utf8)], forKey: "a")
        var line: [UInt8] = []
        Journal.appendLine(
            .clean(lengths: [5], location: ValueLocation(segment: 1, offset: 0)), key: "torn",
            format: .packed(inlineLimit: 16_384), to: &line)
        let torn = Array(line.prefix(14))
        // (A cache's first set creates its segment, under the exclusive lock.)
        try second.setData([Data("warm".utf8)], forKey: "w")
        try leaveWhatAKilledAppenderLeaves(torn)
        // The next set appends beside the dead one (the page still counts it): after its
        // torn start, on the same line.
        try second.setData([Data("next".utf8)], forKey: "b")
        let journal = try Data(contentsOf: journalURL)
        #expect(journal.range(of: Data(torn + Array("CLEAN b ".utf8))) != nil)
        // Read at once by the other cache, and by one that opens beside them.
        #expect(try read(first, "b") == "next")
        let third = try open()
        #expect(try read(third, "b") == "next")
        #expect(try read(third, "a") == "kept")
        #expect(try read(third, "torn") == nil)
        // An exclusive holder (a removal) finds the dead appender counted: it looks at the
        // journal itself and uncounts it.
        #expect(try first.removeValue(forKey: "a"))
        #expect(try word(.sharedAppenders) == 0)
        #expect(try read(second, "a") == nil)
        try first.close()
        try second.close()
        try third.close()
        // The cache that opens alone rewrites the journal: earlier releases never meet the pair.
        let reopened = try open()
        #expect(try read(reopened, "b") == "next")
        #expect(try read(reopened, "a") == nil)
        #expect(reopened.recoveryReport.damagedJournalLines == 0)
        #expect(reopened.recoveryReport.rebuiltJournal)
        #expect(try !String(decoding: Data(contentsOf: journalURL), as: UTF8.self).contains("torn"))
    }

    @Test func aTornTailOfAKilledAppenderIsCutByTheNextExclusiveHolder() throws {
        let first = try open()
        try first.setData([Data("kept".utf8)], forKey: "a")
        let second = try open()
        try leaveWhatAKilledAppenderLeaves(Array("CLEAN torn 12 3".utf8))
        #expect(try second.removeValue(forKey: "a"))
        #expect(try word(.sharedAppenders) == 0)
        #expect(try !String(decoding: Data(contentsOf: journalURL), as: UTF8.self).contains("torn"))
        try first.setData([Data("after".utf8)], forKey: "c")
        #expect(try read(second, "c") == "after")
        #expect(try read(second, "a") == nil)
    }

    /// The next exclusive holder after a rebuilder that died uncounted: a removal of a cache
    /// open before, or the open of a new one.
    @Test(arguments: [false, true])
    func aJournalRebuiltByAHolderThatDiedUncountedIsNeverAppendedTo(fixerOpensAfter: Bool) throws {
        let rebuilder = try open()
        var fixer = try open()
        let appender = try open()
        try fixer.setData([Data("warm".utf8)], forKey: "w1")
        try appender.setData([Data("warm".utf8)], forKey: "w2")
        for index in 0..<100 { try rebuilder.setData([Data("v\(index)".utf8)], forKey: "k\(index % 5)") }
        #expect(try read(fixer, "k4") == "v99")
        #expect(try read(appender, "k4") == "v99")
        // The rebuilder renames a new journal over the old one and "dies" before it counts the
        // rebuild: the count put back, its mark left set.
        let count = try word(.journalReplacements)
        try rebuilder.compact()
        #expect(try word(.journalReplacements) > count)
        try setWord(.journalReplacements, count)
        try setWord(.holderAtWork, 1)
        // The next exclusive holder finds the mark, and counts a rebuild...
        if fixerOpensAfter {
            try fixer.close()
            fixer = try open()
        }
        #expect(try fixer.removeValue(forKey: "w1"))
        #expect(try word(.journalReplacements) > count)
        // ...so that a cache still holding the old file does not append its set to it.
        try appender.setData([Data("two".utf8)], forKey: "b")
        #expect(try read(fixer, "b") == "two")
        for cache in [rebuilder, fixer, appender] { try cache.close() }
        let reopened = try open()
        #expect(try read(reopened, "b") == "two")
        #expect(try read(reopened, "k4") == "v99")
        #expect(try read(reopened, "w1") == nil)
    }

    /// A durable set whose line was written but not synced throws, and is never seen: not by
    /// its own cache, which skips its line and keeps the value before it, nor by anyone after
    /// the rebuild that the broken journal asks for.
    @Test func aSetWhoseLineWasWrittenButNotSyncedIsNeverSeen() throws {
        let faults = FaultInjectingFileSystem()
        let first = try open(syncsWrites: true)
        let second = try open(syncsWrites: true, fileSystem: faults)
        try first.setData([Data("old".utf8)], forKey: "c")
        try second.setData([Data("warm".utf8)], forKey: "w")
        try first.setData([Data("a".utf8)], forKey: "a")
        // The record's sync, then the journal's.
        faults.failCall(named: "fsync", occurrence: 2, errno: EIO)
        #expect(throws: CacheError.self) { try second.setData([Data("new".utf8)], forKey: "c") }
        #expect(faults.injectedFaults == 1)
        #expect(try read(second, "a") == "a")
        #expect(try read(second, "c") == "old")
        // The next write rebuilds the journal from this index.
        try second.setData([Data("d".utf8)], forKey: "d")
        for cache in [first, second] {
            #expect(try read(cache, "c") == "old")
            #expect(try read(cache, "a") == "a")
            #expect(try read(cache, "d") == "d")
        }
        try first.close()
        try second.close()
        let reopened = try open()
        #expect(try read(reopened, "c") == "old")
        #expect(try read(reopened, "d") == "d")
    }
}
