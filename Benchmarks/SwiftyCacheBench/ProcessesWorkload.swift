import Foundation
import SwiftyCacheCore

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// `--workload processes`: a packed directory that several processes write
/// (`sharing: .processes`), 320-byte values:
/// - in one process, sets and gets of a sharing cache against a single-process one, alternating
///   in chunks of 500 operations within each round (the cost of the operation lock and of the
///   check a read makes);
/// - two processes setting disjoint keys at once against one process alone (each process a
///   child of this one, released together), against the floor of a set's system calls
///   (``SharedFloor``, the lock shared) alone and in two processes, and two other floors, and against SQLite in two processes (WAL,
///   `synchronous=NORMAL`, `busy_timeout`, a transaction per set);
/// - how long after one process's set returns another process's `changes()` delivers it (what
///   bounds how long an `ObjectCache`'s memory may serve the value it replaced).
struct ProcessesWorkload {
    static let childFlag = "--processes-child"
    static let latencyFlag = "--processes-latency-child"
    static let valueSize = 320

    let count: Int
    let rounds: Int
    let scratch: Scratch

    static func options(shared: Bool) -> DiskLRUCache.Options {
        var options = DiskLRUCache.Options(storage: .packed)
        options.sharing = shared ? .processes : .singleProcess
        return options
    }

    static func value(_ index: Int) -> [Data] {
        [Data(repeating: UInt8(truncatingIfNeeded: index), count: valueSize)]
    }

    /// A child: `MODE DIR COUNT PREFIX`; says `ready`, waits for a line on its input, sets
    /// COUNT keys, prints `seconds=`.
    static func child(_ arguments: [String]) throws {
        guard arguments.count == 4, let count = Int(arguments[2]) else { throw UsageError("bad child arguments") }
        let (mode, directory, prefix) = (arguments[0], URL(filePath: arguments[1]), arguments[3])
        var set: (Int) -> Void
        var cache: DiskLRUCache?
        var store: SQLiteStore?
        if mode == "sqlite" {
            guard
                let opened = SQLiteStore(
                    path: directory.appending(path: "db.sqlite").path(percentEncoded: false), slots: 1)
            else { throw UsageError("SQLite did not open") }
            opened.execute("PRAGMA busy_timeout=10000;")
            store = opened
            set = { index in opened.set("\(prefix)\(index)", value(index)) }
        } else if let kind = SharedFloor.Kind(rawValue: mode) {
            let floor = SharedFloor(kind, directory: directory, name: prefix)
            set = { _ in floor.set() }
        } else {
            let opened = try DiskLRUCache(
                directory: directory, appVersion: 1, valueCount: 1, maxSize: Int.max, options: options(shared: true))
            cache = opened
            set = { index in try? opened.setData(value(index), forKey: "\(prefix)\(index)") }
        }
        FileHandle.standardOutput.write(Data("ready\n".utf8))
        _ = readLine()
        let start = nanoseconds()
        for index in 0..<count { set(index) }
        let seconds = Double(nanoseconds() - start) / 1e9
        try cache?.close()
        keep(store)
        print("seconds=\(seconds)")
    }

    /// The latency child: `DIR COUNT`; sets COUNT keys `lat-N`, one every 2 ms, and prints
    /// `returned N NANOS` for each once done.
    static func latencyChild(_ arguments: [String]) throws {
        guard arguments.count == 2, let count = Int(arguments[1]) else { throw UsageError("bad child arguments") }
        let cache = try DiskLRUCache(
            directory: URL(filePath: arguments[0]), appVersion: 1, valueCount: 1, maxSize: Int.max,
            options: options(shared: true))
        FileHandle.standardOutput.write(Data("ready\n".utf8))
        _ = readLine()
        var returned: [UInt64] = []
        for index in 0..<count {
            try cache.setData(value(index), forKey: "lat-\(index)")
            returned.append(nanoseconds())
            usleep(2_000)
        }
        try cache.close()
        for (index, time) in returned.enumerated() { print("returned \(index) \(time)") }
    }

    func run() async throws -> [(String, Double)] {
        var derived: [(String, Double)] = []
        derived += try oneProcess()
        derived += try twoProcesses()
        derived += try await latency()
        derived += try reload()
        return derived
    }

    /// Another cache rebuilds the journal of 100,000 entries (`compact()`); the time this
    /// cache's next read takes to replay the new journal, and the time a cache opened afresh
    /// beside them takes to replay it (the reopen it should cost as much as), medians over the
    /// rounds.
    private func reload() throws -> [(String, Double)] {
        let directory = scratch.fresh("processes-reload")
        let writer = try DiskLRUCache(
            directory: directory, appVersion: 1, valueCount: 1, maxSize: Int.max, options: Self.options(shared: true))
        let reader = try DiskLRUCache(
            directory: directory, appVersion: 1, valueCount: 1, maxSize: Int.max, options: Self.options(shared: true))
        let entries = 100_000
        for index in 0..<entries { try writer.setData(Self.value(index), forKey: "r\(index)") }
        keep(try reader.data(forKey: "r0"))
        var times: [Double] = []
        var reopens: [Double] = []
        for round in 0..<rounds {
            try writer.setData(Self.value(round), forKey: "r\(round)")
            try writer.compact()
            let start = nanoseconds()
            keep(try reader.data(forKey: "r1"))
            times.append(Double(nanoseconds() - start) / 1e6)
            // The baseline: a cache opened afresh beside them replays the same journal.
            let opening = nanoseconds()
            let opened = try DiskLRUCache(
                directory: directory, appVersion: 1, valueCount: 1, maxSize: Int.max,
                options: Self.options(shared: true))
            reopens.append(Double(nanoseconds() - opening) / 1e6)
            try opened.close()
        }
        try writer.close()
        try reader.close()
        return [
            ("processes: following another's rebuilt journal of 100,000 entries, ms", median(times)),
            ("processes: opening that directory afresh beside them (a reopen), ms", median(reopens)),
        ]
    }

    /// Sets, then gets, of a sharing and a single-process cache in this process, in
    /// alternating chunks; the median over rounds of each one's seconds per operation.
    private func oneProcess() throws -> [(String, Double)] {
        var setRatios: [Double] = []
        var getRatios: [Double] = []
        for round in 0..<rounds {
            let single = try DiskLRUCache(
                directory: scratch.fresh("single"), appVersion: 1, valueCount: 1, maxSize: Int.max,
                options: Self.options(shared: false))
            let shared = try DiskLRUCache(
                directory: scratch.fresh("shared"), appVersion: 1, valueCount: 1, maxSize: Int.max,
                options: Self.options(shared: true))
            var times = [0.0, 0.0]
            let caches = [single, shared]
            for chunk in stride(from: 0, to: count, by: 500) {
                for turn in 0..<2 {
                    let which = (turn + round + chunk / 500) % 2
                    let start = nanoseconds()
                    for index in chunk..<min(count, chunk + 500) {
                        try caches[which].setData(Self.value(index), forKey: "k\(index)")
                    }
                    times[which] += Double(nanoseconds() - start)
                }
            }
            setRatios.append(times[0] / times[1])
            var generator = SeededGenerator(seed: UInt64(round + 1))
            let order = (0..<count).map { _ in Int.random(in: 0..<count, using: &generator) }
            times = [0, 0]
            for chunk in stride(from: 0, to: count, by: 500) {
                for turn in 0..<2 {
                    let which = (turn + round + chunk / 500) % 2
                    let start = nanoseconds()
                    for index in order[chunk..<min(count, chunk + 500)] {
                        keep(try caches[which].data(forKey: "k\(index)"))
                    }
                    times[which] += Double(nanoseconds() - start)
                }
            }
            getRatios.append(times[0] / times[1])
            try single.close()
            try shared.close()
        }
        return [
            ("processes: one process, sets of a sharing cache × a single-process cache's (speed)", median(setRatios)),
            ("processes: one process, gets of a sharing cache × a single-process cache's (speed)", median(getRatios)),
        ]
    }

    /// One child alone, two at once (disjoint keys), and two SQLite children at once, in
    /// turn each round; throughput is the sets over the slowest child's time.
    private func twoProcesses() throws -> [(String, Double)] {
        var alone: [Double] = []
        var both: [Double] = []
        var sqlite: [Double] = []
        var floorAlone: [Double] = []
        var floorBoth: [Double] = []
        var unlockedAlone: [Double] = []
        var unlockedBoth: [Double] = []
        var sharedLockAlone: [Double] = []
        var sharedLockBoth: [Double] = []
        for _ in 0..<rounds {
            alone.append(try launch(mode: "shared", processes: 1))
            both.append(try launch(mode: "shared", processes: 2))
            floorAlone.append(try launch(mode: "floor", processes: 1))
            floorBoth.append(try launch(mode: "floor", processes: 2))
            unlockedAlone.append(try launch(mode: "floor-unlocked", processes: 1))
            unlockedBoth.append(try launch(mode: "floor-unlocked", processes: 2))
            sharedLockAlone.append(try launch(mode: "floor-shared", processes: 1))
            sharedLockBoth.append(try launch(mode: "floor-shared", processes: 2))
            if SQLiteStore.isAvailable { sqlite.append(try launch(mode: "sqlite", processes: 2)) }
        }
        var derived: [(String, Double)] = [
            ("processes: sets/s, one process (sharing)", median(alone)),
            ("processes: sets/s, two processes at once (sharing, disjoint keys)", median(both)),
            ("processes: two processes' throughput × one process's", median(both) / median(alone)),
            ("processes: floor, sets/s, one process (a set's system calls: the lock shared)", median(sharedLockAlone)),
            ("processes: floor, sets/s, two processes at once", median(sharedLockBoth)),
            (
                "processes: floor, two processes' throughput × one process's",
                median(sharedLockBoth) / median(sharedLockAlone)
            ),
            ("processes: two processes × the floor's two processes (speed)", median(both) / median(sharedLockBoth)),
            (
                "processes: floor with the lock taken exclusively (as before protocol 2), two processes × one",
                median(floorBoth) / median(floorAlone)
            ),
            (
                "processes: floor without a lock (appends only), two processes × one",
                median(unlockedBoth) / median(unlockedAlone)
            ),
        ]
        if !sqlite.isEmpty {
            derived.append(("processes: sets/s, SQLite in two processes (WAL, busy_timeout)", median(sqlite)))
            derived.append(
                ("processes: two processes × SQLite in two processes (speed)", median(both) / median(sqlite)))
        }
        return derived
    }

    /// Runs `processes` children of `mode` on a fresh directory, released together; sets per
    /// second over them all.
    private func launch(mode: String, processes: Int) throws -> Double {
        let directory = scratch.fresh("processes-\(mode)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        if mode == "sqlite" {
            // Created (table, WAL) before the children open it at once.
            let path = directory.appending(path: "db.sqlite").path(percentEncoded: false)
            guard SQLiteStore(path: path, slots: 1) != nil else { throw UsageError("SQLite did not open") }
        }
        var children: [(process: Process, input: Pipe, output: Pipe)] = []
        for index in 0..<processes {
            let process = Process()
            process.executableURL = URL(filePath: CommandLine.arguments[0])
            process.arguments = [
                Self.childFlag, mode, directory.path(percentEncoded: false), String(count), "p\(index)-",
            ]
            let input = Pipe()
            let output = Pipe()
            process.standardInput = input
            process.standardOutput = output
            try process.run()
            children.append((process, input, output))
        }
        for child in children { try Self.waitForReady(child.output) }
        for child in children { child.input.fileHandleForWriting.write(Data("go\n".utf8)) }
        var slowest = 0.0
        for child in children {
            let output = String(decoding: child.output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            child.process.waitUntilExit()
            guard let field = output.split(whereSeparator: \.isWhitespace).first(where: { $0.hasPrefix("seconds=") }),
                let seconds = Double(field.dropFirst("seconds=".count))
            else { throw UsageError("a processes child failed: \(output)") }
            slowest = max(slowest, seconds)
        }
        return Double(count * processes) / slowest
    }

    private static func waitForReady(_ output: Pipe) throws {
        var said = Data()
        while !String(decoding: said, as: UTF8.self).contains("ready") {
            let chunk = output.fileHandleForReading.availableData
            guard !chunk.isEmpty else { throw UsageError("a processes child ended before it was ready") }
            said.append(chunk)
        }
    }

    /// A child sets 500 keys one every 2 ms; this process's sharing cache delivers each as a
    /// change. The delay from the child's set returning to the change here, p50 and p99.
    private func latency() async throws -> [(String, Double)] {
        let directory = scratch.fresh("processes-latency")
        let cache = try DiskLRUCache(
            directory: directory, appVersion: 1, valueCount: 1, maxSize: Int.max, options: Self.options(shared: true))
        let changes = cache.changes()
        let samples = min(500, max(50, count / 40))
        let seen = Task {
            var times: [String: UInt64] = [:]
            for await change in changes {
                if let key = change.key, times[key] == nil { times[key] = nanoseconds() }
                if times.count == samples { break }
            }
            return times
        }
        let process = Process()
        process.executableURL = URL(filePath: CommandLine.arguments[0])
        process.arguments = [Self.latencyFlag, directory.path(percentEncoded: false), String(samples)]
        let input = Pipe()
        let output = Pipe()
        process.standardInput = input
        process.standardOutput = output
        try process.run()
        try Self.waitForReady(output)
        input.fileHandleForWriting.write(Data("go\n".utf8))
        let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        let times = await seen.value
        var delays: [Double] = []
        for line in text.split(separator: "\n") {
            let fields = line.split(separator: " ")
            guard fields.count == 3, fields[0] == "returned", let returned = UInt64(fields[2]),
                let arrived = times["lat-\(fields[1])"]
            else { continue }
            delays.append(Double(arrived > returned ? arrived - returned : 0) / 1e6)
        }
        try await cache.close()
        delays.sort()
        guard !delays.isEmpty else { return [] }
        return [
            ("processes: another process's set to this one's change, p50 ms", delays[delays.count / 2]),
            ("processes: another process's set to this one's change, p99 ms", delays[delays.count * 99 / 100]),
        ]
    }

    private func median(_ values: [Double]) -> Double {
        let sorted = values.sorted()
        return sorted.isEmpty ? 0 : sorted[sorted.count / 2]
    }
}
