import Foundation
import SwiftyCacheCore
import SwiftyCacheTestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// The link count of an open file, which tells packed storage that its active segment was
/// deleted underneath it (`statx` for the count alone on Linux, `fstat` elsewhere).
@Suite struct LinkCountTests {
    let directory = TemporaryDirectory()
    let fileSystem = SystemFileSystem()

    @Test func countsTheNamesOfAnOpenFileDownToZero() throws {
        let path = directory.url.appending(path: "segment").path
        let other = directory.url.appending(path: "second-name").path
        let fd = try fileSystem.open(path, flags: O_RDWR | O_CREAT | O_CLOEXEC, mode: 0o644)
        defer { try? fileSystem.close(fd) }
        #expect(try fileSystem.linkCount(of: fd) == 1)
        try fileSystem.link(path, to: other)
        #expect(try fileSystem.linkCount(of: fd) == 2)
        try fileSystem.unlink(path)
        try fileSystem.unlink(other)
        #expect(try fileSystem.linkCount(of: fd) == 0)
        // The same answer as `fstat`'s.
        #expect(try fileSystem.status(of: fd).linkCount == 0)
    }

    @Test func anInvalidDescriptorIsAnError() {
        #expect(throws: SystemCallFailure.self) { try fileSystem.linkCount(of: -1) }
    }
}
