import Dispatch
import Foundation
import SwiftyCacheCore
import SwiftyCacheTestSupport
import Testing

/// A read-only cache beside a writer in another process delivers the writer's changes: the
/// writer commits and removes over 20 keys (and, in packed storage, compacts every 500 commits;
/// its journal is rebuilt as it grows), and a consumer that applies every change it is given
/// (re-reading everything on `cleared`) ends with every key as the writer left it.
@Suite(.tags(.concurrency)) struct CrossProcessChangesTests {
    @Test(.tags(.slow), .fullRunOnly, arguments: bothStorages)
    func aReaderDeliversTheWritersChangesThroughRebuildsAndCompactions(storage: DiskLRUCache.Storage) async throws {
        let directory = TemporaryDirectory()
        let writer = Process()
        writer.executableURL = reliabilityWorker
        writer.arguments = ["writer", directory.path, "3000", storage.inlineLimit == nil ? "files" : "packed", "wait"]
        let output = Pipe()
        let input = Pipe()
        writer.standardOutput = output
        writer.standardInput = input
        try writer.run()
        // Blocking waits go to a thread of their own, not to the cooperative pool that the
        // async tests running beside this one share.
        await offPool {
            var said = Data()
            while !String(decoding: said, as: UTF8.self).contains("ready") {
                let chunk = output.fileHandleForReading.availableData
                guard !chunk.isEmpty else { break }
                said.append(chunk)
            }
        }
        let reader = try DiskLRUCache(
            directory: directory.url, appVersion: 1, valueCount: 2, maxSize: 1 << 30,
            options: DiskLRUCache.Options(isReadOnly: true, storage: storage))
        let changes = reader.changes()
        // What a consumer shows when it subscribes: the state now; changes then keep it true.
        var initial: [String: Bool] = [:]
        for index in 0..<20 { initial["k\(index)"] = try Self.exists("k\(index)", in: reader) }
        // The writer goes on once the reader watches.
        input.fileHandleForWriting.write(Data("go\n".utf8))
        // The consumer applies every change it is given (re-reading everything on `cleared`),
        // while the writer runs, and reports its model after each.
        let progress = AsyncStream<(model: [String: Bool], perKey: Int, cleared: Int)>.makeStream()
        let consumer = Task { [initial] in
            var model = initial
            var perKey = 0
            var cleared = 0
            for await change in changes {
                switch change.kind {
                case .committed, .removed, .evicted:
                    if let key = change.key { model[key] = change.kind == .committed }
                    perKey += 1
                case .cleared, .overflowed:
                    cleared += 1
                    for index in 0..<20 { model["k\(index)"] = (try? Self.exists("k\(index)", in: reader)) ?? false }
                }
                progress.continuation.yield((model, perKey, cleared))
            }
            progress.continuation.finish()
        }
        await offPool { writer.waitUntilExit() }
        #expect(writer.terminationStatus == 0)
        // The truth: the directory as the writer left it, read by a cache opened now.
        let truthReader = try DiskLRUCache(
            directory: directory.url, appVersion: 1, valueCount: 2, maxSize: 1 << 30,
            options: DiskLRUCache.Options(isReadOnly: true, storage: storage))
        var truth: [String: Bool] = [:]
        for index in 0..<20 { truth["k\(index)"] = try Self.exists("k\(index)", in: truthReader) }
        // Bounded: a watchdog ends the consumer (and the progress) after 120 seconds.
        let watchdog = Watchdog.start { consumer.cancel() }
        var last: (model: [String: Bool], perKey: Int, cleared: Int) = (initial, 0, 0)
        if initial != truth {
            for await report in progress.stream {
                last = report
                if report.model == truth { break }
            }
        }
        watchdog.cancel()
        consumer.cancel()
        print(
            "changes from a writer process, \(storage): \(last.perKey) by key, \(last.cleared) cleared, model \(last.model == truth ? "matches" : "differs")"
        )
        #expect(last.model == truth)
        // By key, or (a consumer behind a rebuild or a compaction) as one `cleared`: either way
        // something was delivered, and the model reached the truth through it.
        #expect(last.perKey + last.cleared > 0)
        try await reader.close()
    }

    static func exists(_ key: String, in cache: DiskLRUCache) throws -> Bool {
        try cache.data(forKey: key) != nil
    }
}
