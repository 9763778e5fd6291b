import Foundation
import SwiftyCacheCore
import SwiftyCacheTestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// The read an `async` overload tries on the caller's task before it hops to the I/O pool:
/// done only from memory (a packed record already in the page cache), and otherwise handed to
/// the full read before it records anything.
@Suite struct MemoryReadTests {
    let directory = TemporaryDirectory()

    @Test func aPackedRecordInMemoryIsReadAndCountsAsAHitWithItsReadLine() throws {
        let cache = try openCache(directory.url, storage: .packed)
        try cache.set("k1", "abc", "de")
        let values = try readFromMemory("k1", in: cache)
        #expect(values == [Data("abc".utf8), Data("de".utf8)])
        // One hit per read, from memory or the full way (after a page was dropped).
        #expect(cache.statistics.hitCount >= 1)
        #expect(cache.statistics.missCount == 0)
        try cache.flush()
        #expect(try JournalFixture.bodyLines(in: directory.url).last == "READ k1")
    }

    @Test func aMissIsFinishedAndCounted() throws {
        let cache = try openCache(directory.url, storage: .packed)
        guard case .finished(nil) = try cache.dataIfInMemory(forKey: "absent") else {
            Issue.record("a miss needs no I/O")
            return
        }
        #expect(cache.statistics.missCount == 1)
    }

    @Test func valueFilesInTheKernelsCachesAreReadAndCountAsAHit() throws {
        let cache = try openCache(directory.url, storage: .files)
        try cache.set("k1", "abc", "de")
        let values = try readFromMemory("k1", in: cache)
        #expect(values == [Data("abc".utf8), Data("de".utf8)])
        #expect(cache.statistics.hitCount >= 1)
        try cache.flush()
        #expect(try JournalFixture.bodyLines(in: directory.url).last == "READ k1")
        // A value file out of the page cache: the full read, and nothing recorded here.
        guard try needsIOOnceEvicted("k1", file: directory.url.appending(path: "k1.1").path, in: cache) else {
            Issue.record("a value file not in the page cache needs I/O")
            return
        }
        #expect(try cache.strings("k1") == ["abc", "de"])
    }

    @Test func largeSlotsOfPackedStorageAndReadOnlyCachesNeedIOAndRecordNothing() throws {
        let packed = try openCache(directory.url, storage: .packed(inlineLimit: 4))
        try packed.set("k", "a", "longer than four")
        guard case .needsIO = try packed.dataIfInMemory(forKey: "k") else {
            Issue.record("a packed value in a file needs I/O")
            return
        }
        #expect(packed.statistics.hitCount == 0)
        #expect(packed.statistics.missCount == 0)
        try packed.close()
        let reader = try DiskLRUCache(
            directory: directory.url, appVersion: testAppVersion, valueCount: 2, maxSize: Int.max,
            options: .init(readOnly: true, storage: .packed(inlineLimit: 4)))
        guard case .needsIO = try reader.dataIfInMemory(forKey: "k") else {
            Issue.record("a read-only cache reads the writer's journal: I/O")
            return
        }
    }

    @Test func aRecordNotInThePageCacheNeedsIOUntilAFullReadBringsItBack() throws {
        var cache = try openCache(directory.url, storage: .packed)
        try cache.set("k1", "abc", "de")
        try cache.close()
        cache = try openCache(directory.url, storage: .packed)
        let segment = directory.url.appending(path: "segment-00000001.pack").path
        guard try needsIOOnceEvicted("k1", file: segment, in: cache) else {
            Issue.record("a record not in the page cache needs I/O")
            return
        }
        #expect(try cache.strings("k1") == ["abc", "de"])  // the full read brings it in
        #expect(try readFromMemory("k1", in: cache) == [Data("abc".utf8), Data("de".utf8)])
        #expect(cache.statistics.hitCount >= 2)
        #expect(cache.statistics.missCount == 0)
    }

    @Test func aDamagedRecordNeedsIOAndTheFullReadDropsIt() throws {
        let cache = try openCache(directory.url, storage: .packed)
        try cache.set("k1", "abc", "de")
        #expect(try cache.strings("k1") == ["abc", "de"])  // opens the segment
        // Flip the last value byte of the record, after the 16-byte segment header.
        let segment = directory.url.appending(path: "segment-00000001.pack")
        var bytes = try Data(contentsOf: segment)
        bytes[bytes.count - 1] ^= 0xFF
        let handle = try FileHandle(forWritingTo: segment)
        try handle.seek(toOffset: UInt64(bytes.count - 1))
        try handle.write(contentsOf: bytes.suffix(1))
        try handle.close()
        guard case .needsIO = try cache.dataIfInMemory(forKey: "k1") else {
            Issue.record("damage is dealt with by the full read")
            return
        }
        #expect(try cache.data(forKey: "k1") == nil)
        #expect(cache.statistics.corruptRecordCount >= 1)
    }

    @Test func asyncReadsOfBothStoragesReturnWhatSyncReadsReturn() async throws {
        for storage in bothStorages {
            let cache = try openCache(directory.url.appending(path: "\(storage)"), storage: storage)
            try await cache.setData([Data("a".utf8), Data("b".utf8)], forKey: "k")
            #expect(try await cache.data(forKey: "k") == [Data("a".utf8), Data("b".utf8)])
            #expect(try await cache.data(forKey: "absent") == nil)
            #expect(cache.statistics.hitCount == 1)
            #expect(cache.statistics.missCount == 1)
        }
    }

    /// The values of `key` read from memory only. The kernel may drop pages at any time (this
    /// machine's writeback runs beside the tests), so a `needsIO` is followed by a full read,
    /// which brings them back, and one more try: three tries in all.
    private func readFromMemory(_ key: String, in cache: DiskLRUCache) throws -> [Data]? {
        for _ in 0..<3 {
            if case .finished(let values) = try cache.dataIfInMemory(forKey: key) { return values }
            _ = try cache.data(forKey: key)
        }
        Issue.record("\(key) was never read from memory, even right after a full read")
        return nil
    }

    /// Whether reading `key` from memory needs I/O once `file` is out of the page cache. The
    /// kernel may bring a page back before the read (readahead, another thread), so it tries
    /// three times; a read that ignored the page cache would be done every time.
    private func needsIOOnceEvicted(_ key: String, file: String, in cache: DiskLRUCache) throws -> Bool {
        for _ in 0..<3 {
            try evictFromPageCache(file)
            let before = cache.statistics
            if case .needsIO = try cache.dataIfInMemory(forKey: key) {
                // Sent to the full read with nothing recorded.
                #expect(cache.statistics.hitCount == before.hitCount)
                #expect(cache.statistics.missCount == before.missCount)
                return true
            }
        }
        return false
    }

    /// Writes the file's pages to disk and asks the kernel to drop them from the page cache.
    private func evictFromPageCache(_ path: String) throws {
        let fd = open(path, O_RDONLY)
        try #require(fd >= 0)
        defer { close(fd) }
        #expect(fsync(fd) == 0)
        #expect(posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED) == 0)
    }
}

/// A packed read records the hit with its plan, in one lock hold; a read that must go the
/// validating way after all (a slot in a file, a damaged record) takes the hit back first.
@Suite struct OneHoldReadTests {
    let directory = TemporaryDirectory()

    @Test func eachReadCountsOnceWhicheverWayItGoes() throws {
        let cache = try openCache(directory.url, storage: .packed(inlineLimit: 4))
        try cache.set("small", "ab", "cd")  // one record
        try cache.set("large", "ab", "longer than four")  // slot 1 in a file: the validating way
        #expect(try cache.strings("small") == ["ab", "cd"])
        #expect(try cache.strings("large") == ["ab", "longer than four"])
        #expect(cache.statistics.hitCount == 2)
        #expect(cache.statistics.missCount == 0)
        #expect(try cache.strings("absent") == nil)
        #expect(cache.statistics.missCount == 1)
        try cache.flush()
        let reads = try JournalFixture.bodyLines(in: directory.url).filter { $0.hasPrefix("READ ") }
        #expect(reads.first == "READ small")
        #expect(reads.contains("READ large"))
    }

    @Test func aDamagedRecordIsOneMissAndOneCorruptRecord() throws {
        let cache = try openCache(directory.url, storage: .packed)
        try cache.set("k1", "abc", "de")
        let segment = directory.url.appending(path: "segment-00000001.pack")
        let handle = try FileHandle(forUpdating: segment)
        let end = try handle.seekToEnd()
        try handle.seek(toOffset: end - 1)
        try handle.write(contentsOf: Data([0]))  // "e" becomes NUL
        try handle.close()
        #expect(try cache.data(forKey: "k1") == nil)
        #expect(cache.statistics.hitCount == 0)
        #expect(cache.statistics.missCount == 1)
        #expect(cache.statistics.corruptRecordCount == 1)
        #expect(try !cache.contains("k1"))
    }
}
