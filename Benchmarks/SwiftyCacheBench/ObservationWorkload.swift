import Dispatch
import Foundation
import SwiftyCacheCore

/// What observing costs (`--workload observation`): a packed set of 2 × 128 B with no
/// subscriber, with one and with a hundred (each a task consuming its changes), interleaved in
/// the same rounds; and the time from a commit's return to its delivery to a waiting consumer,
/// p50 and p99, in this process.
struct ObservationWorkload {
    let count: Int
    let rounds: Int
    let scratch: Scratch

    func run() async throws -> [(engine: Figure, floor: Figure?)] {
        let keys = (0..<count).map { "key-\($0)" }
        let values = [Data(repeating: 1, count: 128), Data(repeating: 2, count: 128)]
        var runs: [String: [Run]] = [:]
        for round in -1..<rounds {
            let caches = try (0..<3).map { index in
                try DiskLRUCache(
                    directory: scratch.fresh("observed-\(index)"), appVersion: 1, valueCount: 2, maxSize: Int.max,
                    options: .init(storage: .packed))
            }
            // Consumers that keep up: each reads its changes as they come.
            var consumers: [Task<Void, Never>] = []
            for (cache, subscribers) in [(caches[1], 1), (caches[2], 100)] {
                for _ in 0..<subscribers {
                    let changes = cache.changes()
                    consumers.append(Task.detached { for await change in changes { keep(change) } })
                }
            }
            let sets = try interleaved(
                count,
                [
                    { try caches[0].setData(values, forKey: keys[$0]) },
                    { try caches[1].setData(values, forKey: keys[$0]) },
                    { try caches[2].setData(values, forKey: keys[$0]) },
                ])
            let latency = try await deliveryLatency(caches[1], keys: keys)
            let crossProcess = try await crossProcessLatency(samples: min(count, 1_000))
            for cache in caches { try await cache.close() }
            for consumer in consumers { await consumer.value }
            guard round >= 0 else { continue }
            runs["none", default: []].append(sets[0])
            runs["one", default: []].append(sets[1])
            runs["hundred", default: []].append(sets[2])
            runs["latency", default: []].append(latency)
            runs["cross", default: []].append(crossProcess)
        }
        return [
            summarizePair("set, 1 subscriber", runs["one"] ?? [], baseline: "set, no subscriber", runs["none"] ?? []),
            summarizePair(
                "set, 100 subscribers", runs["hundred"] ?? [], baseline: "set, no subscriber", runs["none"] ?? []),
            (summarize("commit to delivery, in process", runs["latency"] ?? []), nil),
            (summarize("commit to delivery, across processes", runs["cross"] ?? []), nil),
        ]
    }

    /// The synchronous set (in an `async` function the overload that offloads would be taken).
    private static func set(_ values: [Data], forKey key: String, in cache: DiskLRUCache) throws {
        try cache.setData(values, forKey: key)
    }

    /// One consumer waiting; from each set's call to the consumer's wake-up (the set's own
    /// time included: the consumer may wake before the call returns), one set at a time.
    private func deliveryLatency(_ cache: DiskLRUCache, keys: [String]) async throws -> Run {
        let samples = min(keys.count, 2_000)
        let changes = cache.changes()
        let received = AsyncStream<UInt64>.makeStream()
        let consumer = Task.detached {
            var count = 0
            for await _ in changes {
                received.continuation.yield(nanoseconds())
                count += 1
                if count == samples { break }
            }
            received.continuation.finish()
        }
        var latencies: [Double] = []
        var iterator = received.stream.makeAsyncIterator()
        let start = nanoseconds()
        let value = [Data(repeating: 3, count: 16), Data()]
        for index in 0..<samples {
            let called = nanoseconds()
            try Self.set(value, forKey: "latency-\(index)", in: cache)
            guard let delivered = await iterator.next() else { break }
            latencies.append(Double(delivered &- called))
        }
        await consumer.value
        return Run(operations: samples, seconds: Double(nanoseconds() - start) / 1e9, latencies: latencies)
    }

    /// The argument that runs this program as the writer of ``crossProcessLatency(samples:)``.
    static let writerFlag = "--observation-writer"

    /// The writer in a process of its own: `count` sets of one key after another, each value
    /// the monotonic clock (shared by every process of the machine) just before its set, a
    /// millisecond apart so that each is delivered on its own.
    static func writer(count: Int, directory: URL) throws {
        let cache = try DiskLRUCache(
            directory: directory, appVersion: 1, valueCount: 2, maxSize: Int.max, options: .init(storage: .packed))
        FileHandle.standardOutput.write(Data("ready\n".utf8))
        // Waits for the reader to say it has subscribed.
        _ = readLine()
        for index in 0..<count {
            let stamp = withUnsafeBytes(of: nanoseconds().littleEndian) { Data($0) }
            try cache.setData([stamp, Data()], forKey: "k\(index)")
            usleep(1_000)
        }
        try cache.close()
    }

    /// A read-only cache here, a writer in a child process: from the writer's clock before each
    /// set to this process's consumer waking up with the change.
    private func crossProcessLatency(samples: Int) async throws -> Run {
        let directory = scratch.fresh("observed-cross")
        let child = Process()
        child.executableURL = URL(filePath: CommandLine.arguments[0])
        child.arguments = [Self.writerFlag, "\(samples)", directory.path(percentEncoded: false)]
        let input = Pipe()
        let output = Pipe()
        child.standardInput = input
        child.standardOutput = output
        try child.run()
        var said = Data()
        while !String(decoding: said, as: UTF8.self).contains("ready") {
            let chunk = output.fileHandleForReading.availableData
            guard !chunk.isEmpty else { break }
            said.append(chunk)
        }
        let reader = try DiskLRUCache(
            directory: directory, appVersion: 1, valueCount: 2, maxSize: Int.max,
            options: .init(isReadOnly: true, storage: .packed))
        let changes = reader.changes()
        input.fileHandleForWriting.write(Data("go\n".utf8))
        var latencies: [Double] = []
        let start = nanoseconds()
        for await change in changes where change.kind == .committed {
            let delivered = nanoseconds()
            guard let key = change.key, let values = try await reader.data(forKey: key), values[0].count == 8 else {
                continue
            }
            let stamp = values[0].withUnsafeBytes { UInt64(littleEndian: $0.loadUnaligned(as: UInt64.self)) }
            latencies.append(Double(delivered &- stamp))
            if latencies.count == samples || key == "k\(samples - 1)" { break }
        }
        child.waitUntilExit()
        try await reader.close()
        return Run(operations: latencies.count, seconds: Double(nanoseconds() - start) / 1e9, latencies: latencies)
    }
}
