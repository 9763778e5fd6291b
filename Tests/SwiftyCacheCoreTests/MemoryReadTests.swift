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
    /// What is in memory is the file system's say (``FaultInjectingFileSystem/PageCache``), so
    /// that these tests do not depend on what the kernel keeps; ``SystemReadIfCachedTests``
    /// checks the system calls themselves.
    let fileSystem = FaultInjectingFileSystem()

    private func openCache(storage: DiskLRUCache.Storage) throws -> DiskLRUCache {
        try DiskLRUCache(
            directory: directory.url, appVersion: testAppVersion, valueCount: 2, maxSize: Int.max,
            options: .init(storage: storage), fileSystem: fileSystem)
    }

    @Test func aPackedRecordInMemoryIsReadAndCountsAsAHitWithItsReadLine() throws {
        fileSystem.setPageCache(.holdsEverything)
        let cache = try openCache(storage: .packed)
        try cache.set("k1", "abc", "de")
        guard case .finished(let values) = try cache.dataIfInMemory(forKey: "k1") else {
            Issue.record("a record in memory is read from memory")
            return
        }
        #expect(values == [Data("abc".utf8), Data("de".utf8)])
        #expect(cache.statistics.hitCount == 1)
        #expect(cache.statistics.missCount == 0)
        try cache.flush()
        #expect(try JournalFixture.bodyLines(in: directory.url).last == "READ k1")
    }

    @Test func aMissIsFinishedAndCounted() throws {
        let cache = try openCache(storage: .packed)
        guard case .finished(nil) = try cache.dataIfInMemory(forKey: "absent") else {
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
        // File storage records nothing; packed storage records the access with its plan, in
        // one lock hold, and keeps it (the full read that follows makes the same touch again).
        let linesAfter = try JournalFixture.bodyLines(in: directory.url)
        #expect(linesAfter == linesBefore + (storage == .files ? [] : ["READ k1"]))
        // The full read, then (its pages now in memory) the read from memory.
        #expect(try cache.strings("k1") == ["abc", "de"])
        fileSystem.setPageCache(.holdsEverything)
        guard case .finished(let values) = try cache.dataIfInMemory(forKey: "k1") else {
            Issue.record("values in memory are read from memory")
            return
        }
        #expect(values == [Data("abc".utf8), Data("de".utf8)])
        #expect(cache.statistics.hitCount == 2)
        #expect(cache.statistics.missCount == 0)
        try cache.flush()
        #expect(try JournalFixture.bodyLines(in: directory.url).suffix(2) == ["READ k1", "READ k1"])
    }

    @Test func valueFilesInMemoryAreReadWithoutABlockingCall() throws {
        fileSystem.setPageCache(.holdsEverything)
        let cache = try openCache(storage: .files)
        try cache.set("k1", "abc", "de")
        let blockingBefore = fileSystem.calls(to: "open") + fileSystem.calls(to: "read")
        guard case .finished(let values) = try cache.dataIfInMemory(forKey: "k1") else {
            Issue.record("value files in memory are read from memory")
            return
        }
        #expect(values == [Data("abc".utf8), Data("de".utf8)])
        #expect(fileSystem.calls(to: "open") + fileSystem.calls(to: "read") == blockingBefore)
        #expect(fileSystem.calls(to: "openat2") == 2)
        #expect(fileSystem.calls(to: "preadv2") >= 2)
        #expect(cache.statistics.hitCount == 1)
    }

    @Test func largeSlotsOfPackedStorageAndReadOnlyCachesNeedIOAndRecordNothing() throws {
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
            options: .init(readOnly: true, storage: .packed(inlineLimit: 4)), fileSystem: fileSystem)
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

#if os(Linux)
/// The system calls behind the reads from memory, against the kernel's page cache.
@Suite struct SystemReadIfCachedTests {
    let directory = TemporaryDirectory()
    let fileSystem = SystemFileSystem()

    @Test func aPageJustReadIsReadFromMemoryAtItsOffset() throws {
        let (fd, bytes) = try openFileOfPages()
        defer { close(fd) }
        var buffer = [UInt8](repeating: 0, count: 4096)
        // Read the blocking way, then from memory. (The kernel may drop the page in between,
        // so a refusal is followed by another blocking read: three tries.)
        var fromMemory: Int?
        for _ in 0..<3 where fromMemory == nil {
            _ = try buffer.withUnsafeMutableBytes { try fileSystem.read(fd, into: $0, at: 8192) }
            buffer = [UInt8](repeating: 0, count: 4096)
            fromMemory = try buffer.withUnsafeMutableBytes { try fileSystem.readIfCached(fd, into: $0, at: 8192) }
        }
        #expect(fromMemory == 4096)
        #expect(Data(buffer) == bytes[8192..<12_288])
    }

    /// `RWF_NOWAIT` refuses a page out of memory, unless the readahead it starts completed at
    /// once (which a fast virtual disk does): either way, never a partial or wrong read.
    @Test func anEvictedPageIsRefusedOrReadWhole() throws {
        let (fd, bytes) = try openFileOfPages()
        defer { close(fd) }
        var buffer = [UInt8](repeating: 0, count: 4096)
        for _ in 0..<10 {
            #expect(fsync(fd) == 0)
            #expect(posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED) == 0)
            guard try !isResident(fd: fd, length: 4096) else { continue }
            let read = try buffer.withUnsafeMutableBytes { try fileSystem.readIfCached(fd, into: $0, at: 0) }
            if let read {
                #expect(read == 4096)
                #expect(Data(buffer) == bytes[0..<4096])
            }
            let outcome = read == nil ? "refused" : "read by the readahead it started"
            print("SystemReadIfCachedTests: an evicted page was \(outcome)")
            return
        }
        print("SystemReadIfCachedTests: the kernel kept the page in memory through 10 drops; eviction not checked")
    }

    /// A file of 64 KiB of varied bytes, open for reading.
    private func openFileOfPages() throws -> (Int32, Data) {
        let path = directory.url.appending(path: "pages").path
        let bytes = Data((0..<65_536).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ $0 >> 8) })
        try bytes.write(to: URL(filePath: path))
        let fd = open(path, O_RDONLY)
        try #require(fd >= 0)
        return (fd, bytes)
    }

    /// Whether the first page of the file is in the page cache (`mincore` on a mapping that
    /// touches nothing).
    private func isResident(fd: Int32, length: Int) throws -> Bool {
        let mapping = try #require(mmap(nil, length, PROT_READ, MAP_SHARED, fd, 0))
        try #require(mapping != MAP_FAILED)
        defer { munmap(mapping, length) }
        var vector: UInt8 = 0
        try #require(mincore(mapping, length, &vector) == 0)
        return vector & 1 == 1
    }
}
#endif

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
