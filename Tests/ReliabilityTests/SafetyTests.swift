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

/// The worker executable the cross-process tests start.
let reliabilityWorker = builtExecutable(
    "swiftycache-crash-worker",
    packageRoot: URL(filePath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent())

/// Runs a command to completion; its exit status and output.
@discardableResult
func runCommand(_ arguments: [String]) throws -> (status: Int32, output: String) {
    let process = Process()
    process.executableURL = URL(filePath: "/usr/bin/env")
    process.arguments = arguments
    let pipe = Pipe()
    process.standardOutput = pipe
    process.standardError = pipe
    try process.run()
    let output = pipe.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    return (process.terminationStatus, String(decoding: output, as: UTF8.self))
}

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
        #expect(try !cache.contains("k1"))  // dropped
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

    @Test(.tags(.slow)) func aJournalOfHalfAGigabyteOfNewlinesOpensInBoundedMemory() throws {
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

    @Test(.tags(.slow)) func aGigabyteOfRandomBytesIsRefusedInBoundedMemory() throws {
        var block = randomMebibyte(seed: 42)
        block[0] = UInt8(ascii: "x")  // a first byte of zero would read as power-loss damage
        let (outcome, rss) = try openInWorker { handle in
            for _ in 0..<1024 { try handle.write(contentsOf: block) }
        }
        print("hostile journal, 1 GiB of random bytes: \(outcome), peak RSS grew \(rss / 1024) MiB")
        #expect(outcome == "threw not a cache directory")
        #expect(rss < 32 << 10)
    }

    @Test(.tags(.slow)) func aValidHeaderBeforeRandomBytesIsWipedInBoundedMemory() throws {
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
        #expect(try cache.remove(stored[1]))
        #expect(try cache.remove(stored[2]))
        #expect(!cache.hasJournalErrors)
        try cache.setData([Data("x".utf8)], forKey: "new")
        try cache.close()
        let reopened = try DiskLRUCache(directory: cacheURL, appVersion: 1, valueCount: 1, maxSize: 1 << 30)
        #expect(!reopened.recoveryReport.wasWiped)
        #expect(try !reopened.contains(stored[1]))
        #expect(try reopened.data(forKey: "new") == [Data("x".utf8)])
        #expect(try reopened.data(forKey: stored[0]) == [value])
        try reopened.close()
    }
}

/// A power cut in the middle of commits, simulated on a real ext4 file system with the
/// `EXT4_IOC_SHUTDOWN` ioctl (`EXT4_GOING_FLAGS_NOLOGFLUSH`: nothing more reaches the disk).
@Suite(.serialized) struct PowerLossTests {
    static let shutdownRequest: UInt = 0x8004_587D  // _IOR('X', 125, __u32)
    static let noLogFlush: UInt32 = 2

    /// Formats and mounts a small ext4 image; `nil`, with a printed reason, where this machine
    /// cannot (not root, no loop devices, no mkfs.ext4).
    static func mountImage(in root: TemporaryDirectory, name: String) throws -> (image: String, mountPoint: String)? {
        let image = root.appending("\(name).ext4").path(percentEncoded: false)
        let mountPoint = root.appending(name).path(percentEncoded: false)
        try FileManager.default.createDirectory(atPath: mountPoint, withIntermediateDirectories: true)
        guard try runCommand(["truncate", "-s", "64M", image]).status == 0,
            try runCommand(["mkfs.ext4", "-q", "-F", image]).status == 0
        else {
            print("skipped \(name): mkfs.ext4 is not available here")
            return nil
        }
        let mounted = try runCommand(["mount", "-o", "loop", image, mountPoint])
        guard mounted.status == 0 else {
            print("skipped \(name): cannot mount a loop device here (\(mounted.output))")
            return nil
        }
        return (image, mountPoint)
    }

    /// Commits `count` entries, cuts the power after them, remounts, and returns the reopened
    /// cache's entries by key, and the keys whose commit returned.
    static func commitThenCutPower(
        syncsWrites: Bool, storage: DiskLRUCache.Storage, name: String
    ) throws -> (returned: [String], found: [String: [CheckedValue.Parsed]])? {
        let root = TemporaryDirectory(name)
        guard let (image, mountPoint) = try mountImage(in: root, name: name) else { return nil }
        let cacheURL = URL(filePath: mountPoint).appending(path: "cache", directoryHint: .isDirectory)
        var returned: [String] = []
        do {
            let cache = try DiskLRUCache(
                directory: cacheURL, appVersion: 1, valueCount: 2, maxSize: 1 << 30,
                options: DiskLRUCache.Options(syncsWrites: syncsWrites, storage: storage))
            for sequence in 1...40 {
                let key = "k\(sequence)"
                try cache.setData(
                    (0..<2).map { CheckedValue.make(key: key, slot: $0, sequence: sequence, fillerLength: 3000) },
                    forKey: key)
                returned.append(key)
            }
            let fd = open(mountPoint, O_RDONLY)
            var flags = noLogFlush
            #expect(ioctl(fd, shutdownRequest, &flags) == 0)
            close(fd)
            // The file system is gone: what follows fails, and must not crash.
            _ = try? cache.setData([Data("late".utf8), Data("write".utf8)], forKey: "late")
            try? cache.close()
        }
        try runCommand(["umount", mountPoint])
        guard try runCommand(["mount", "-o", "loop", image, mountPoint]).status == 0 else {
            Issue.record("the image did not mount again")
            return nil
        }
        defer { _ = try? runCommand(["umount", mountPoint]) }
        let found = try CacheInvariants.check(
            cacheURL, appVersion: 1, valueCount: 2, allowWipe: true, storage: storage)
        return (returned, found)
    }

    @Test(.tags(.slow), arguments: bothStorages)
    func withSyncedWritesEveryCommitThatReturnedSurvivesAPowerCut(storage: DiskLRUCache.Storage) throws {
        guard let (returned, found) = try Self.commitThenCutPower(syncsWrites: true, storage: storage, name: "durable")
        else { return }
        let missing = returned.filter { found[$0] == nil }
        print(
            "power cut with syncsWrites, \(storage): \(returned.count) commits returned, \(missing.count) missing after remount"
        )
        #expect(missing.isEmpty, "lost: \(missing)")
    }

    @Test(.tags(.slow), arguments: bothStorages)
    func withoutSyncedWritesAPowerCutLeavesNothingTornOrMisattributed(storage: DiskLRUCache.Storage) throws {
        // CacheInvariants.check verifies every surviving value is whole and its own key's.
        guard
            let (returned, found) = try Self.commitThenCutPower(syncsWrites: false, storage: storage, name: "buffered")
        else { return }
        print(
            "power cut without syncsWrites, \(storage): \(returned.count) commits returned, \(found.count) present after remount"
        )
        #expect(Set(found.keys).isSubset(of: Set(returned)))
    }
}

/// One writer process and a reader in this one, on the same directory: the reader never sees a
/// mix of two commits, through the writer's overwrites, removals and journal compactions.
@Suite struct CrossProcessReadOnlyTests {
    @Test(.tags(.slow), arguments: bothStorages)
    func aReaderInAnotherProcessNeverSeesAMixedEntry(storage: DiskLRUCache.Storage) throws {
        let directory = TemporaryDirectory()
        let writer = Process()
        writer.executableURL = reliabilityWorker
        writer.arguments = ["writer", directory.path, "6000", storage.inlineLimit == nil ? "files" : "packed"]
        let output = Pipe()
        writer.standardOutput = output
        try writer.run()
        // Wait for the writer's first commit: it says so on its output.
        var said = Data()
        while !String(decoding: said, as: UTF8.self).contains("ready") {
            let chunk = output.fileHandleForReading.availableData
            guard !chunk.isEmpty else { break }
            said.append(chunk)
        }
        let reader = try DiskLRUCache(
            directory: directory.url, appVersion: 1, valueCount: 2, maxSize: 1 << 30,
            options: DiskLRUCache.Options(readOnly: true, storage: storage))
        var reads = 0
        var hits = 0
        var refreshes = 0
        var mixed: [String] = []
        while writer.isRunning || reads < 2_000 {
            for index in 0..<20 {
                let key = "k\(index)"
                reads += 1
                guard let values = try reader.data(forKey: key) else { continue }
                hits += 1
                let parsed = values.map(CheckedValue.parse)
                guard let first = parsed[0], let second = parsed[1], first.key == key, second.key == key,
                    first.slot == 0, second.slot == 1, first.sequence == second.sequence
                else {
                    mixed.append("\(key): \(values.map(\.count))")
                    continue
                }
            }
            if reads % 400 == 0 {
                try reader.refresh()
                refreshes += 1
            }
        }
        writer.waitUntilExit()
        print(
            "read-only beside a writer process, \(storage): \(reads) reads, \(hits) hits, \(refreshes) refreshes, \(mixed.count) mixed"
        )
        #expect(writer.terminationStatus == 0)
        #expect(mixed.isEmpty, "\(mixed.prefix(5))")
        #expect(hits > 0)
        try reader.refresh()
        #expect(reader.count > 0)
    }

    @Test func aReaderOpensACacheOnAReadOnlyFileSystem() throws {
        let mountPoint = TemporaryDirectory()
        guard try runCommand(["mount", "-t", "tmpfs", "-o", "size=4m", "tmpfs", mountPoint.path]).status == 0 else {
            print("skipped aReaderOpensACacheOnAReadOnlyFileSystem: cannot mount a tmpfs here")
            return
        }
        defer { _ = try? runCommand(["umount", mountPoint.path]) }
        let cacheURL = mountPoint.appending("cache")
        do {
            let writer = try DiskLRUCache(directory: cacheURL, appVersion: 1, valueCount: 1, maxSize: 1 << 20)
            try writer.setData([Data("archived".utf8)], forKey: "k")
            try writer.close()
        }
        guard try runCommand(["mount", "-o", "remount,ro", mountPoint.path]).status == 0 else {
            Issue.record("the tmpfs did not remount read-only")
            return
        }
        // A writer cannot open it (even root cannot write there); a reader can.
        #expect(throws: CacheError.self) {
            try DiskLRUCache(directory: cacheURL, appVersion: 1, valueCount: 1, maxSize: 1 << 20)
        }
        let reader = try DiskLRUCache(
            directory: cacheURL, appVersion: 1, valueCount: 1, maxSize: 1 << 20,
            options: DiskLRUCache.Options(readOnly: true))
        #expect(try reader.data(forKey: "k") == [Data("archived".utf8)])
        try reader.close()
    }
}

/// The async API's threads, counted in a process of their own: no other test's threads there.
@Suite struct AsyncThreadBoundTests {
    let directory = TemporaryDirectory()

    /// 10,000 concurrent async reads start no thread beyond the I/O pool (at most its limit)
    /// and Swift's cooperative pool (one per core); an unbounded queue would start hundreds.
    @Test func aBurstOfAsyncReadsAddsNoThreadsBeyondThePools() throws {
        let (status, output) = try runCommand([
            reliabilityWorker.path(percentEncoded: false), "async-burst", directory.url.path(percentEncoded: false),
        ])
        #expect(status == 0, "\(output)")
        func value(_ name: String) -> Int? {
            output.split(separator: "\n").first { $0.hasPrefix(name + " ") }.flatMap {
                Int($0.dropFirst(name.count + 1))
            }
        }
        let before = try #require(value("threads-before"))
        let peak = try #require(value("threads-peak"))
        let limit = try #require(value("pool-limit"))
        let cores = try #require(value("cores"))
        print(
            "async burst in a worker: \(before) threads before, \(peak) at most during (pool limit \(limit), \(cores) cores)"
        )
        #expect(value("misses") == 0)
        #expect(before > 0)
        #expect(peak <= before + limit + cores + 2)
    }
}
