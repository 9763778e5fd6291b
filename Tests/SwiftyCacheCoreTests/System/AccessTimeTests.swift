import Foundation
import SwiftyCacheCore
import SwiftyCacheTestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

#if os(Linux)
/// Segment reads leave the file's access time alone (`O_NOATIME`, set on the descriptor).
@Suite struct AccessTimeTests {
    let directory = TemporaryDirectory()
    let fileSystem = SystemFileSystem()

    @Test func aDescriptorThatSkipsAccessTimesReadsWithoutChangingThem() throws {
        let path = try fileWithOldAccessTime("skips")
        let fd = open(path, O_RDONLY)
        try #require(fd >= 0)
        defer { close(fd) }
        fileSystem.skipAccessTimeUpdates(fd)
        #expect(fcntl(fd, F_GETFL) & 0o1000000 != 0)
        #expect(try readAll(fd) == 4096)
        #expect(try accessTime(path) == 1_000)
    }

    /// The control: the same read without the flag moves the access time, unless the file
    /// system never records it (`noatime`), which the test prints.
    @Test func anOrdinaryDescriptorMovesTheAccessTime() throws {
        let path = try fileWithOldAccessTime("control")
        let fd = open(path, O_RDONLY)
        try #require(fd >= 0)
        defer { close(fd) }
        #expect(fcntl(fd, F_GETFL) & 0o1000000 == 0)
        #expect(try readAll(fd) == 4096)
        if try accessTime(path) == 1_000 {
            print("AccessTimeTests: this file system does not record access times; the control shows nothing")
        }
    }

    /// A 4 KiB file whose access time (1,000 s after the epoch) is older than its modification (2,000 s).
    private func fileWithOldAccessTime(_ name: String) throws -> String {
        let path = directory.url.appending(path: name).path
        try Data(repeating: 7, count: 4096).write(to: URL(filePath: path))
        var times = [timespec(tv_sec: 1_000, tv_nsec: 0), timespec(tv_sec: 2_000, tv_nsec: 0)]
        try #require(utimensat(AT_FDCWD, path, &times, 0) == 0)
        try #require(try accessTime(path) == 1_000)
        return path
    }

    private func readAll(_ fd: Int32) throws -> Int {
        var buffer = [UInt8](repeating: 0, count: 8192)
        return try buffer.withUnsafeMutableBytes { try fileSystem.read(fd, into: $0, at: 0) }
    }

    private func accessTime(_ path: String) throws -> Int {
        var info = stat()
        try #require(stat(path, &info) == 0)
        return info.st_atim.tv_sec
    }
}
#endif
