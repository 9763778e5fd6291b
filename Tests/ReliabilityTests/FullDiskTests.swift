import Dispatch
import Foundation
import SwiftyCacheCore
import SwiftyCacheTestSupport
import Testing

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A full disk: removals and eviction still free space, and the cache leaves the journal's
/// failure state by itself once a rebuild fits.
@Suite struct FullDiskTests {
    @Test func aFullTmpfsCanBeShrunkByRemovals() throws {
        let mountPoint = TemporaryDirectory()
        let mounted = try runCommand(["mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", mountPoint.path])
        guard mounted.status == 0 else {
            print("skipped aFullTmpfsCanBeShrunkByRemovals: cannot mount a tmpfs here (\(mounted.output))")
            return
        }
        defer { _ = try? runCommand(["umount", mountPoint.path]) }
        let cacheURL = mountPoint.appending("cache")
        let cache = try DiskLRUCache(directory: cacheURL, appVersion: 1, valueCount: 1, maxSize: 1 << 30)
        let value = Data(repeating: 7, count: 60_000)
        var stored: [String] = []
        for index in 0..<100 {
            do {
                try cache.setData([value], forKey: "v\(index)")
                stored.append("v\(index)")
            } catch {
                break
            }
        }
        #expect(stored.count >= 8)
        // Take the last free bytes with a file of our own, so that the journal cannot grow.
        let filler = mountPoint.appending("filler").path(percentEncoded: false)
        let fd = open(filler, O_WRONLY | O_CREAT, 0o600)
        let page = [UInt8](repeating: 1, count: 4096)
        while page.withUnsafeBytes({ write(fd, $0.baseAddress, $0.count) }) > 0 {}
        while page.withUnsafeBytes({ write(fd, $0.baseAddress, 1) }) > 0 {}
        close(fd)
        // Reads buffer READ lines; flushing them fails: the journal is broken.
        for _ in 0..<20_000 where !cache.hasJournalErrors {
            _ = try cache.data(forKey: stored[0])
        }
        #expect(cache.hasJournalErrors)
        expectError(.journalUnavailable) { try cache.setData([Data("x".utf8)], forKey: "new") }
        // Removing frees space all the same, and the rebuild that follows fits in it.
        #expect(try cache.removeValue(forKey: stored[1]))
        #expect(try cache.removeValue(forKey: stored[2]))
        #expect(!cache.hasJournalErrors)
        try cache.setData([Data("x".utf8)], forKey: "new")
        try cache.close()
        let reopened = try DiskLRUCache(directory: cacheURL, appVersion: 1, valueCount: 1, maxSize: 1 << 30)
        #expect(!reopened.recoveryReport.wasWiped)
        #expect(try !reopened.containsValue(forKey: stored[1]))
        #expect(try reopened.data(forKey: "new") == [Data("x".utf8)])
        #expect(try reopened.data(forKey: stored[0]) == [value])
        try reopened.close()
    }
}
