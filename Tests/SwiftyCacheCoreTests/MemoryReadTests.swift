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
@Suite(.tags(.concurrency)) struct MemoryReadTests {
    let directory = TemporaryDirectory()
    /// What is in memory is the file system's say (``FaultInjectingFileSystem/PageCache``), so
    /// that these tests do not depend on what the kernel keeps; ``SystemReadIfCachedTests``
    /// checks the system calls themselves.
    let fileSystem = FaultInjectingFileSystem()

    private func openCache(storage: DiskLRUCache.Storage) throws -> DiskLRUCache {
        try DiskLRUCache(
            directory: directory.url, appVersion: testAppVersion, valueCount: 2, maxSize: Int.max,
            options: .init(storage: storage), fileSystem: fileSystem)
    }

    @Test func aPackedRecordInMemoryIsReadAndCountsAsAHitWritingNothing() throws {
        fileSystem.setPageCache(.holdsEverything)
        let cache = try openCache(storage: .packed)
        try cache.set("k1", "abc", "de")
        try cache.flush()
        let linesBefore = try JournalFixture.bodyLines(in: directory.url)
        guard case .found(let values) = try cache.dataIfInMemory(forKey: "k1") else {
            Issue.record("a record in memory is read from memory")
            return
        }
        #expect(values == [Data("abc".utf8), Data("de".utf8)])
        #expect(cache.statistics.hitCount == 1)
        #expect(cache.statistics.missCount == 0)
        try cache.flush()
        #expect(try JournalFixture.bodyLines(in: directory.url) == linesBefore)
    }

    @Test func aMissIsFinishedAndCounted() throws {
        let cache = try openCache(storage: .packed)
        guard case .missing = try cache.dataIfInMemory(forKey: "absent") else {
            Issue.record("a miss needs no I/O")
            return
        }
        #expect(cache.statistics.missCount == 1)
    }

    @Test(arguments: bothStorages)
    func valuesNotInMemoryNeedIOAndNoHitIsCounted(storage: DiskLRUCache.Storage) throws {
        let cache = try openCache(storage: storage)
        try cache.set("k1", "abc", "de")
        try cache.flush()
        let linesBefore = try JournalFixture.bodyLines(in: directory.url)
        fileSystem.setPageCache(.holdsNothing)
        guard case .needsIO = try cache.dataIfInMemory(forKey: "k1") else {
            Issue.record("values not in memory need I/O")
            return
        }
        #expect(cache.statistics.hitCount == 0)
        #expect(cache.statistics.missCount == 0)
        try cache.flush()
        // Nothing is journaled: file storage records nothing, packed storage records the
        // access (an LRU touch) in memory with its plan, in one lock hold, and keeps it.
        #expect(try JournalFixture.bodyLines(in: directory.url) == linesBefore)
        // The full read, then (its pages now in memory) the read from memory.
        #expect(try cache.strings("k1") == ["abc", "de"])
        fileSystem.setPageCache(.holdsEverything)
        guard case .found(let values) = try cache.dataIfInMemory(forKey: "k1") else {
            Issue.record("values in memory are read from memory")
            return
        }
        #expect(values == [Data("abc".utf8), Data("de".utf8)])
        #expect(cache.statistics.hitCount == 2)
        #expect(cache.statistics.missCount == 0)
        try cache.flush()
        // File storage journals each hit for Java's LRU order; packed storage, none.
        #expect(
            try JournalFixture.bodyLines(in: directory.url)
                == linesBefore + (storage == .files ? ["READ k1", "READ k1"] : []))
    }

    @Test func valueFilesInMemoryAreReadWithoutABlockingCall() throws {
        fileSystem.setPageCache(.holdsEverything)
        let cache = try openCache(storage: .files)
        try cache.set("k1", "abc", "de")
        let blockingBefore = fileSystem.calls(to: "open") + fileSystem.calls(to: "read")
        guard case .found(let values) = try cache.dataIfInMemory(forKey: "k1") else {
            Issue.record("value files in memory are read from memory")
            return
        }
        #expect(values == [Data("abc".utf8), Data("de".utf8)])
        #expect(fileSystem.calls(to: "open") + fileSystem.calls(to: "read") == blockingBefore)
        #expect(fileSystem.calls(to: "openat2") == 2)
        #expect(fileSystem.calls(to: "preadv2") >= 2)
        #expect(cache.statistics.hitCount == 1)
    }

    @Test func largeSlotsOfAPackedCacheAndReadOnlyCachesNeedIOAndRecordNothing() throws {
        fileSystem.setPageCache(.holdsEverything)
        let packed = try openCache(storage: .packed(inlineLimit: 4))
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
            options: .init(isReadOnly: true, storage: .packed(inlineLimit: 4)), fileSystem: fileSystem)
        guard case .needsIO = try reader.dataIfInMemory(forKey: "k") else {
            Issue.record("a read-only cache reads the writer's journal: I/O")
            return
        }
    }

    @Test func aDamagedRecordNeedsIOAndTheFullReadDropsIt() throws {
        fileSystem.setPageCache(.holdsEverything)
        let cache = try openCache(storage: .packed)
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
            let cache = try SwiftyCacheCoreTests.openCache(
                directory.url.appending(path: "\(storage)"), storage: storage)
            try await cache.setData([Data("a".utf8), Data("b".utf8)], forKey: "k")
            #expect(try await cache.data(forKey: "k") == [Data("a".utf8), Data("b".utf8)])
            #expect(try await cache.data(forKey: "absent") == nil)
            #expect(cache.statistics.hitCount == 1)
            #expect(cache.statistics.missCount == 1)
        }
    }
}
