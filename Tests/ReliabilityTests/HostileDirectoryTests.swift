import Foundation
import SwiftyCacheCore
import SwiftyCacheTestSupport
import Testing

@Suite struct HostileDirectoryTests {
    let directory = TemporaryDirectory()

    @Test func plantedLockFileLinkIsRefusedNotFollowed() throws {
        let outside = TemporaryDirectory()
        let target = outside.appending("target")
        try Data("keep".utf8).write(to: target)
        try FileManager.default.createDirectory(at: directory.url, withIntermediateDirectories: true)
        try FileManager.default.createSymbolicLink(at: directory.appending("journal.lock"), withDestinationURL: target)
        expectError(.ioFailure) {
            try DiskLRUCache(directory: directory.url, appVersion: 1, valueCount: 2, maxSize: 100)
        }
        #expect(try String(contentsOf: target, encoding: .utf8) == "keep")
    }

    @Test func plantedTemporaryJournalLinkIsReplacedNotFollowed() throws {
        let outside = TemporaryDirectory()
        let target = outside.appending("target")
        try Data("keep".utf8).write(to: target)
        let cache = try DiskLRUCache(directory: directory.url, appVersion: 1, valueCount: 1, maxSize: 1 << 20)
        try FileManager.default.createSymbolicLink(at: directory.appending("journal.tmp"), withDestinationURL: target)
        try cache.setData([Data("v".utf8)], forKey: "k")
        for _ in 0..<2_100 { try cache.snapshot(forKey: "k")?.close() }  // forces a journal rebuild
        cache.waitForBackgroundWork()
        #expect(!cache.hasJournalErrors)
        #expect(try JournalFixture.bodyLines(in: directory.url).first == "CLEAN k 1")
        #expect(try String(contentsOf: target, encoding: .utf8) == "keep")
    }

    @Test func keysCanNeverNameAPathOutsideTheDirectory() throws {
        let cache = try DiskLRUCache(directory: directory.url, appVersion: 1, valueCount: 1, maxSize: 100)
        for key in ["../x", "/etc/passwd", "..", "a/../../b", "%2e%2e"] {
            expectError(.invalidKey) { try cache.setData([Data()], forKey: key) }
        }
    }
}
