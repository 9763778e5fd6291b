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

/// One writer process and a reader in this one, on the same directory: the reader never sees a
/// mix of two commits, through the writer's overwrites, removals and journal compactions.
@Suite struct CrossProcessReadOnlyTests {
    @Test(.tags(.slow), .fullRunOnly, arguments: bothStorages)
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
            options: DiskLRUCache.Options(isReadOnly: true, storage: storage))
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
            options: DiskLRUCache.Options(isReadOnly: true))
        #expect(try reader.data(forKey: "k") == [Data("archived".utf8)])
        try reader.close()
    }
}
