import Foundation
import SwiftyCacheCore
import SwiftyCacheTestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

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
