import Foundation
import SwiftyCacheCodable
import SwiftyCacheCore

/// `--workload warm-start`: the first reads of a launch, with and without a warm start. Each
/// launch is a fresh process (``child(mode:hot:directory:)``) that opens a cache of small notes
/// and reads the keys the previous launch used most, in a shuffled order:
/// - `cold`: no warm start; every read goes to disk;
/// - `at-once`: a warm start, the reads beginning as soon as the open returns (racing the
///   background load, as an app that reads at once meets it);
/// - `ready`: a warm start, the reads beginning after `waitUntilWarm()`.
/// The launches alternate in each round, each from a copy of the directory the setup closed.
/// The files are in the page cache (a launch soon after the last one); what differs is only
/// whether the values are decoded in memory.
struct WarmStartWorkload {
    static let childFlag = "--warm-start-child"
    static let modes = ["cold", "at-once", "ready"]

    let count: Int
    let rounds: Int
    let scratch: Scratch

    /// The keys read at a launch: at most 1,000, the first reads the issue measures.
    var hot: Int { min(1000, max(1, count / 2)) }

    static func configuration(hot: Int, warm: Bool) -> ObjectCacheConfiguration {
        ObjectCacheConfiguration(maxDiskSize: Int.max, memoryLimit: 2 * hot, warmStartCount: warm ? hot : 0)
    }

    /// The hot keys, every other entry's, in the order a launch reads them.
    static func readOrder(hot: Int) -> [String] {
        var generator = SeededGenerator(seed: 7)
        return (0..<hot).map { "n\($0 * 2)" }.shuffled(using: &generator)
    }

    /// One launch: prints `open_ms= wait_ms= reads_ms= memory_hits=`.
    static func child(mode: String, hot: Int, directory: URL) async throws {
        let order = readOrder(hot: hot)
        let start = nanoseconds()
        let cache = try ObjectCache<String, SmallNote>(
            directory: directory, configuration: configuration(hot: hot, warm: mode != "cold"))
        let opened = nanoseconds()
        if mode == "ready" { await cache.waitUntilWarm() }
        let ready = nanoseconds()
        let before = cache.statistics.memoryHits
        try readAll(order, from: cache)
        let done = nanoseconds()
        let hits = cache.statistics.memoryHits - before
        try await cache.close()
        func milliseconds(_ from: UInt64, _ to: UInt64) -> String { String(Double(to - from) / 1e6) }
        print(
            "open_ms=\(milliseconds(start, opened)) wait_ms=\(milliseconds(opened, ready))"
                + " reads_ms=\(milliseconds(ready, done)) memory_hits=\(hits)")
    }

    /// The synchronous reads an app's first screen makes.
    private static func readAll(_ keys: [String], from cache: ObjectCache<String, SmallNote>) throws {
        for key in keys { keep(try cache.value(forKey: key)) }
    }

    func run() async throws -> [(String, Double)] {
        let base = scratch.fresh("warm-start-base")
        let directory = scratch.fresh("warm-start")
        let directoryPath = directory.path(percentEncoded: false)
        do {
            let cache = try ObjectCache<String, SmallNote>(
                directory: base, configuration: Self.configuration(hot: hot, warm: true))
            for i in 0..<max(count, 2 * hot) { try await cache.set(SmallNote.make(i), forKey: "n\(i)") }
            for key in Self.readOrder(hot: hot) { keep(try await cache.value(forKey: key)) }
            try await cache.close()
        }
        var fields: [String: [String: [Double]]] = [:]
        for round in 0..<rounds {
            let modes = Self.modes.indices.map { Self.modes[($0 + round) % Self.modes.count] }
            for mode in modes {
                // Every launch starts from the directory the setup closed: a launch's reads
                // change what the next open replays.
                try? FileManager.default.removeItem(atPath: directoryPath)
                try FileManager.default.copyItem(at: base, to: directory)
                for (name, value) in try launch(mode, directory: directory) {
                    fields[mode, default: [:]][name, default: []].append(value)
                }
            }
        }
        func median(_ mode: String, _ name: String) -> Double {
            let values = (fields[mode]?[name] ?? [0]).sorted()
            return values[values.count / 2]
        }
        var derived: [(String, Double)] = []
        for mode in Self.modes {
            derived.append(("warm start: first \(hot) reads of a launch, ms (\(mode))", median(mode, "reads_ms")))
            derived.append(("warm start: memory hits of those reads (\(mode))", median(mode, "memory_hits")))
        }
        derived.append(("warm start: open, ms (cold)", median("cold", "open_ms")))
        derived.append(("warm start: open, ms (warm)", median("ready", "open_ms")))
        derived.append(("warm start: open to warm, ms (waitUntilWarm)", median("ready", "wait_ms")))
        return derived
    }

    /// Runs one launch in a fresh process and returns its fields.
    private func launch(_ mode: String, directory: URL) throws -> [(String, Double)] {
        let process = Process()
        process.executableURL = URL(filePath: CommandLine.arguments[0])
        process.arguments = [Self.childFlag, mode, String(hot), directory.path(percentEncoded: false)]
        let pipe = Pipe()
        process.standardOutput = pipe
        try process.run()
        let output = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        guard process.terminationStatus == 0 else { throw UsageError("the warm-start child failed: \(output)") }
        return output.split(whereSeparator: \.isWhitespace).compactMap { field in
            let parts = field.split(separator: "=")
            guard parts.count == 2, let value = Double(parts[1]) else { return nil }
            return (String(parts[0]), value)
        }
    }
}
