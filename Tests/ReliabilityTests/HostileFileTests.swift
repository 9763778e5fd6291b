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

/// Hostile and damaged files: never a trap, a hang, or memory without bound.
@Suite struct HostileFileTests {
    let directory = TemporaryDirectory()

    @Test func aFIFOUnderAValueFileNameIsAMissAndHangsNothing() throws {
        let cache = try DiskLRUCache(directory: directory.url, appVersion: 1, valueCount: 2, maxSize: 1 << 20)
        try cache.setData([Data("a".utf8), Data("b".utf8)], forKey: "k1")
        try cache.setData([Data("c".utf8), Data("d".utf8)], forKey: "k2")
        let path = directory.appending("k1.0").path(percentEncoded: false)
        try FileManager.default.removeItem(atPath: path)
        #expect(mkfifo(path, 0o600) == 0)
        // The read runs on another thread; a hang would leave the semaphore unsignalled.
        let done = DispatchSemaphore(value: 0)
        let result = LockedState<[Data]??>(nil)
        DispatchQueue.global().async {
            result.withLock { $0 = .some(try? cache.data(forKey: "k1")) }
            done.signal()
        }
        #expect(done.wait(timeout: .now() + 30) == .success, "a read of a FIFO hung")
        #expect(result.withLock { $0 } == .some(nil))  // a miss
        #expect(try cache.data(forKey: "k2") == [Data("c".utf8), Data("d".utf8)])
        #expect(cache.size == 2)
        #expect(try !cache.containsValue(forKey: "k1"))  // dropped
    }

    @Test func appVersionOutsideInt32IsAnInvalidConfiguration() throws {
        for appVersion in [Int(Int32.max) + 1, Int(Int32.min) - 1, Int.max] {
            expectError(.invalidConfiguration) {
                try DiskLRUCache(directory: directory.url, appVersion: appVersion, valueCount: 1, maxSize: 10)
            }
        }
        let cache = try DiskLRUCache(directory: directory.url, appVersion: Int(Int32.max), valueCount: 1, maxSize: 10)
        try cache.close()
    }

    /// A kill inside `setData` leaves `DIRTY k` as the journal's last line and a torn
    /// `k.0.tmp`: the next open, here as in the Java cache, deletes every file of `k`, so no later
    /// edit of `k` can publish the torn file.
    @Test func afterAKillInsideSetDataNoTemporaryFileSurvives() throws {
        try JournalFixture.write(["DIRTY k", "CLEAN k 3 3", "DIRTY k"], to: directory.url, appVersion: 1)
        try JournalFixture.writeFile("k.0", "old", in: directory.url)
        try JournalFixture.writeFile("k.1", "old", in: directory.url)
        try JournalFixture.writeFile("k.0.tmp", "torn pre", in: directory.url)
        let cache = try DiskLRUCache(directory: directory.url, appVersion: 1, valueCount: 2, maxSize: 1 << 20)
        #expect(cache.recoveryReport.droppedIncompleteEntries == 1)
        #expect(try JournalFixture.fileNames(in: directory.url) == ["journal", "journal.lock"])
        #expect(try cache.data(forKey: "k") == nil)
    }

    /// Opens a hostile journal in a separate process and returns what it printed, with the
    /// growth of its peak resident memory over a worker that opened an empty directory on
    /// this machine (the baseline differs between machines: loaded libraries, locale data).
    private func openInWorker(_ journal: (FileHandle) throws -> Void) throws -> (outcome: String, rssKiB: Int) {
        let empty = TemporaryDirectory()
        let baseline = try runWorker(on: empty.url)
        #expect(baseline.outcome == "kept 0")
        let path = directory.appending("journal")
        _ = FileManager.default.createFile(atPath: path.path(percentEncoded: false), contents: nil)
        let handle = try FileHandle(forWritingTo: path)
        try journal(handle)
        try handle.close()
        let hostile = try runWorker(on: directory.url)
        print("open-rss baseline \(baseline.rssKiB / 1024) MiB, hostile \(hostile.rssKiB / 1024) MiB")
        return (hostile.outcome, hostile.rssKiB - baseline.rssKiB)
    }

    private func runWorker(on url: URL) throws -> (outcome: String, rssKiB: Int) {
        let (status, output) = try runCommand([
            reliabilityWorker.path(percentEncoded: false), "open-rss", url.path(percentEncoded: false),
        ])
        #expect(status == 0, "\(output)")
        let lines = output.split(separator: "\n")
        let outcome = lines.first { $0.hasPrefix("outcome ") }.map { String($0.dropFirst(8)) } ?? output
        let rss = lines.first { $0.hasPrefix("rss-kib ") }.flatMap { Int($0.dropFirst(8)) } ?? Int.max / 2
        return (outcome, rss)
    }

    @Test(.tags(.slow), .fullRunOnly) func aJournalOfHalfAGigabyteOfNewlinesOpensInBoundedMemory() throws {
        let (outcome, rss) = try openInWorker { handle in
            try handle.write(contentsOf: Data("libcore.io.DiskLruCache\n1\n1\n2\n\n".utf8))
            let block = Data(repeating: UInt8(ascii: "\n"), count: 1 << 20)
            for _ in 0..<512 { try handle.write(contentsOf: block) }
        }
        print("hostile journal, 512 MiB of newlines: \(outcome), peak RSS grew \(rss / 1024) MiB")
        #expect(outcome == "wiped")
        #expect(rss < 32 << 10)
    }

    /// A MiB of pseudo-random bytes, the same for the same seed.
    private func randomMebibyte(seed: UInt64) -> Data {
        var generator = SplitMix(state: seed)
        return Data((0..<(1 << 20)).map { _ in UInt8(truncatingIfNeeded: generator.next()) })
    }

    @Test(.tags(.slow), .fullRunOnly) func aGigabyteOfRandomBytesIsRefusedInBoundedMemory() throws {
        var block = randomMebibyte(seed: 42)
        block[0] = UInt8(ascii: "x")  // a first byte of zero would read as power-loss damage
        let (outcome, rss) = try openInWorker { handle in
            for _ in 0..<1024 { try handle.write(contentsOf: block) }
        }
        print("hostile journal, 1 GiB of random bytes: \(outcome), peak RSS grew \(rss / 1024) MiB")
        #expect(outcome == "threw not a cache directory")
        #expect(rss < 32 << 10)
    }

    @Test(.tags(.slow), .fullRunOnly) func aValidHeaderBeforeRandomBytesIsWipedInBoundedMemory() throws {
        let block = randomMebibyte(seed: 7)
        let (outcome, rss) = try openInWorker { handle in
            try handle.write(contentsOf: Data("libcore.io.DiskLruCache\n1\n1\n2\n\n".utf8))
            for _ in 0..<256 { try handle.write(contentsOf: block) }
        }
        print("hostile journal, a header and 256 MiB of random bytes: \(outcome), peak RSS grew \(rss / 1024) MiB")
        #expect(outcome == "wiped")
        #expect(rss < 32 << 10)
    }
}
