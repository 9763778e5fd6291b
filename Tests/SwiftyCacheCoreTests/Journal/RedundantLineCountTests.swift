import Foundation
import SwiftyCacheCore
import SwiftyCacheTestSupport
import Testing

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// When the journal is rewritten: once its redundant lines reach 2,000 and outnumber the
/// entries. In packed storage a line is redundant only once a later line of its key replaces
/// it, so a cache that only grows never rewrites its journal; file storage counts every commit
/// (its `DIRTY` line), as the Java library does.
@Suite struct RedundantLineCountTests {
    let directory = TemporaryDirectory()

    func open(_ storage: DiskLRUCache.Storage, syncsWrites: Bool = false) throws -> DiskLRUCache {
        try DiskLRUCache(
            directory: directory.url, appVersion: testAppVersion, valueCount: 1, maxSize: Int.max,
            options: DiskLRUCache.Options(syncsWrites: syncsWrites, storage: storage))
    }

    /// The journal's inode: a rewrite renames a new file over it.
    func journalInode() throws -> UInt64 {
        var status = stat()
        guard stat(directory.url.appending(path: "journal").path(percentEncoded: false), &status) == 0 else {
            throw CocoaError(.fileNoSuchFile)
        }
        return UInt64(status.st_ino)
    }

    func value(_ i: Int, _ round: Int) -> [Data] { [Data("value \(i) of round \(round)".utf8)] }

    @Test(arguments: [false, true])
    func aPackedCacheThatOnlyGrowsKeepsItsJournal(syncsWrites: Bool) throws {
        let cache = try open(.packed, syncsWrites: syncsWrites)
        // The first batch rewrites the journal once, under the magic of one that holds batches.
        var first = DiskLRUCache.WriteBatch()
        first.setData(value(0, 0), forKey: "k0")
        try cache.write(first)
        cache.waitForBackgroundWork()
        let inode = try journalInode()
        for i in 1..<2_500 { try cache.setData(value(i, 0), forKey: "k\(i)") }
        for part in 0..<5 {
            var batch = DiskLRUCache.WriteBatch()
            for i in (2_500 + 300 * part)..<(2_800 + 300 * part) { batch.setData(value(i, 0), forKey: "k\(i)") }
            try cache.write(batch)
        }
        cache.waitForBackgroundWork()
        #expect(try journalInode() == inode, "4,000 new keys rewrote the journal")
        // Replacing every value makes 4,000 lines redundant, more than the entries: a rewrite.
        for i in 0..<4_000 { try cache.setData(value(i, 1), forKey: "k\(i)") }
        cache.waitForBackgroundWork()
        #expect(try journalInode() != inode)
        try cache.close()
        let reopened = try open(.packed)
        #expect(reopened.count == 4_000)
        for i in stride(from: 0, to: 4_000, by: 97) { #expect(try reopened.data(forKey: "k\(i)") == value(i, 1)) }
    }

    /// Under churn every new key evicts an old one: each eviction's `REMOVE` line and the line
    /// it ends are redundant, so the journal is rewritten before it holds more than about 2,000
    /// redundant lines beside its entries' (counting one a removal would let it reach 4,000).
    @Test func aPackedCacheUnderChurnKeepsItsJournalBounded() throws {
        let cache = try DiskLRUCache(
            directory: directory.url, appVersion: testAppVersion, valueCount: 1, maxSize: 500 * 100,
            options: DiskLRUCache.Options(storage: .packed))
        let payload = [Data(repeating: 1, count: 100)]
        var longest = 0
        for i in 0..<8_000 {
            try cache.setData(payload, forKey: "churn-\(i)")
            if i % 100 == 99 {
                cache.waitForBackgroundWork()
                let journal = try Data(contentsOf: directory.url.appending(path: "journal"))
                longest = max(longest, journal.count(where: { $0 == UInt8(ascii: "\n") }))
            }
        }
        #expect(cache.count == 500)
        #expect(longest > 2_000, "the churn never let the journal grow: the test measures nothing")
        #expect(longest <= 2_000 + 500 + 200, "the journal reached \(longest) lines")
    }

    @Test func compactRewritesAJournalOfNewKeysOnly() throws {
        let cache = try open(.packed)
        for i in 0..<100 { try cache.setData(value(i, 0), forKey: "k\(i)") }
        let inode = try journalInode()
        try cache.compact()
        #expect(try journalInode() != inode, "compact() left the journal as the sets wrote it")
    }

    @Test func fileStorageCountsEveryCommitAsTheJavaLibraryDoes() throws {
        let cache = try open(.files)
        let inode = try journalInode()
        for i in 0..<2_100 { try cache.setData(value(i, 0), forKey: "k\(i)") }
        cache.waitForBackgroundWork()
        #expect(try journalInode() != inode, "2,100 commits (and their DIRTY lines) did not rewrite the journal")
        try cache.close()
        #expect(try open(.files).data(forKey: "k2099") == value(2_099, 0))
    }
}
