import Foundation
import SwiftyCacheCodable
import SwiftyCacheCore

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The write path against SQLite in the same rounds, with the typed notes of the typed-path
/// rows (`SmallNote`, about 320 bytes of JSON) in a packed `ObjectCache`: durable single sets
/// against autocommit inserts (WAL, `synchronous=FULL`), a durable `save()` of 500 values
/// against one transaction of 500 inserts, the same without syncs (`synchronous=NORMAL`), four
/// threads of durable sets against one (on one cache, and on a cache each); and the bytes a
/// get writes.
struct DurabilityWorkloads {
    let count: Int
    let rounds: Int
    let scratch: Scratch

    static let batch = 500

    func cache(durable: Bool) throws -> ObjectCache<String, SmallNote> {
        // A memory tier that holds a batch's 500 write-back values until `save()`.
        var configuration = ObjectCacheConfiguration(maxDiskSize: Int.max, memoryLimit: 2 * Self.batch)
        configuration.syncsWrites = durable
        return try ObjectCache(directory: scratch.fresh(durable ? "durable" : "buffered"), configuration: configuration)
    }

    func database(durable: Bool) throws -> SQLiteStore? {
        let path = scratch.fresh("sqlite-durability").path(percentEncoded: false)
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        return SQLiteStore(path: path + "/kv.sqlite", slots: 1, durable: durable)
    }

    func run() throws -> (rows: [(engine: Figure, floor: Figure?)], derived: [(String, Double)]) {
        let notes = (0..<max(count, Self.batch)).map(SmallNote.make)
        let encoder = JSONEncoder()
        var rows: [(engine: Figure, floor: Figure?)] = []
        var derived: [(String, Double)] = []
        var runs: [String: [Run]] = [:]
        let singles = max(count / 50, 40)
        let batches = 6
        for round in -1..<rounds {
            // Durable single sets, alternating with autocommit inserts.
            let durableCache = try cache(durable: true)
            guard let durableDatabase = try database(durable: true) else { return ([], []) }
            let (single, singleSQLite) = try alternating(
                singles, chunk: 20,
                first: { try durableCache.set(notes[$0], forKey: "note-\($0)") },
                second: { durableDatabase.set("note-\($0)", [try encoder.encode(notes[$0])]) })
            // The floor of a durable set: its encoded bytes appended to a file and synced
            // (`fdatasync`, as the cache's sync on Linux), alternating with the cache's sets.
            let floorDirectory = scratch.fresh("durable-floor")
            try FileManager.default.createDirectory(at: floorDirectory, withIntermediateDirectories: true)
            let floorPath = floorDirectory.appending(path: "floor").path(percentEncoded: false)
            let floor = open(floorPath, O_WRONLY | O_CREAT | O_APPEND, 0o600)
            guard floor >= 0 else { throw CocoaError(.fileWriteUnknown) }
            defer { close(floor) }
            let floorBytes = try notes.prefix(64).map { try Array(encoder.encode($0)) }
            let (singleAgain, singleFloor) = try alternating(
                singles, chunk: 20,
                first: { try durableCache.set(notes[$0], forKey: "again-\($0)") },
                second: { i in
                    let bytes = floorBytes[i % floorBytes.count]
                    _ = bytes.withUnsafeBytes { write(floor, $0.baseAddress, $0.count) }
                    _ = fsyncData(floor)
                })
            // Durable batches: 500 write-back values and one save(), against one transaction.
            let (saved, savedSQLite) = try batchRounds(batches, cache: durableCache, database: durableDatabase, notes)
            try durableCache.close()
            // The same as one batch set (`set(contentsOf:)`, written through), on stores of their own.
            let setCache = try cache(durable: true)
            guard let setDatabase = try database(durable: true) else { return ([], []) }
            let (batchSet, batchSetSQLite) = try batchRounds(
                batches, cache: setCache, database: setDatabase, notes, batchSet: true)
            try setCache.close()
            // The same batches without syncs.
            let bufferedCache = try cache(durable: false)
            guard let bufferedDatabase = try database(durable: false) else { return ([], []) }
            let (buffered, bufferedSQLite) = try batchRounds(
                batches * 4, cache: bufferedCache, database: bufferedDatabase, notes)
            let bufferedSetCache = try cache(durable: false)
            guard let bufferedSetDatabase = try database(durable: false) else { return ([], []) }
            let (bufferedSet, bufferedSetSQLite) = try batchRounds(
                batches * 4, cache: bufferedSetCache, database: bufferedSetDatabase, notes, batchSet: true)
            try bufferedSetCache.close()
            try bufferedCache.close()
            // Durable sets from four threads against one thread, on one cache each.
            let oneThread = try cache(durable: true)
            let oneSeconds = onThreads(1) { _ in
                for i in 0..<singles { try? oneThread.set(notes[i], forKey: "one-\(i)") }
            }
            try oneThread.close()
            let fourThreads = try cache(durable: true)
            let fourSeconds = onThreads(4) { thread in
                for i in 0..<singles { try? fourThreads.set(notes[i], forKey: "four-\(thread)-\(i)") }
            }
            try fourThreads.close()
            // Four threads on a cache each: a log per writer, no syncs shared, no hand-offs.
            let ownCaches = try (0..<4).map { _ in try cache(durable: true) }
            let ownSeconds = onThreads(4) { thread in
                for i in 0..<singles { try? ownCaches[thread].set(notes[i], forKey: "own-\(i)") }
            }
            for own in ownCaches { try own.close() }
            // Their floor: the notes' bytes through the least a group commit can be.
            let groupFloorBytes = floorBytes
            let oneFloor = GroupSyncFloor(path: floorDirectory.appending(path: "group-one").path(percentEncoded: false))
            let oneFloorSeconds = onThreads(1) { _ in
                for i in 0..<singles { oneFloor.commit(groupFloorBytes[i % groupFloorBytes.count]) }
            }
            let fourFloor = GroupSyncFloor(
                path: floorDirectory.appending(path: "group-four").path(percentEncoded: false))
            let fourFloorSeconds = onThreads(4) { _ in
                for i in 0..<singles { fourFloor.commit(groupFloorBytes[i % groupFloorBytes.count]) }
            }
            let gatheringFloor = GroupSyncFloor(
                path: floorDirectory.appending(path: "group-gathering").path(percentEncoded: false), gathering: 4)
            let gatheringFloorSeconds = onThreads(4) { _ in
                for i in 0..<singles { gatheringFloor.commit(groupFloorBytes[i % groupFloorBytes.count]) }
            }
            guard round >= 0 else { continue }
            for (name, run) in [
                ("single", single), ("single sqlite", singleSQLite), ("again", singleAgain),
                ("again floor", singleFloor), ("save", saved), ("save sqlite", savedSQLite),
                ("buffered", buffered), ("buffered sqlite", bufferedSQLite), ("batch set", batchSet),
                ("batch set sqlite", batchSetSQLite), ("buffered set", bufferedSet),
                ("buffered set sqlite", bufferedSetSQLite),
            ] {
                runs[name, default: []].append(run)
            }
            runs["one thread", default: []].append(Run(operations: singles, seconds: oneSeconds, latencies: []))
            runs["four threads", default: []].append(Run(operations: 4 * singles, seconds: fourSeconds, latencies: []))
            runs["four caches", default: []].append(Run(operations: 4 * singles, seconds: ownSeconds, latencies: []))
            runs["one thread floor", default: []].append(
                Run(operations: singles, seconds: oneFloorSeconds, latencies: []))
            runs["four threads floor", default: []].append(
                Run(operations: 4 * singles, seconds: fourFloorSeconds, latencies: []))
            runs["four threads gathering floor", default: []].append(
                Run(operations: 4 * singles, seconds: gatheringFloorSeconds, latencies: []))
        }
        let pairs = [
            ("single", "ObjectCache durable set note", "sqlite FULL autocommit insert note"),
            ("save", "ObjectCache durable save() of 500 notes", "sqlite FULL transaction of 500 inserts"),
            ("buffered", "ObjectCache save() of 500 notes", "sqlite NORMAL transaction of 500 inserts"),
            ("batch set", "ObjectCache durable set(contentsOf:) of 500", "sqlite FULL transaction of 500 inserts"),
            ("buffered set", "ObjectCache set(contentsOf:) of 500 notes", "sqlite NORMAL transaction of 500 inserts"),
        ]
        for (key, name, baseline) in pairs {
            let pair = summarizePair(name, runs[key] ?? [], baseline: baseline, runs["\(key) sqlite"] ?? [])
            rows.append(pair)
            derived.append(("\(name): × sqlite (speed)", pair.1.medianSeconds / max(pair.0.medianSeconds, 1e-12)))
        }
        let againPair = summarizePair(
            "ObjectCache durable set note (against the floor)", runs["again"] ?? [],
            baseline: "floor: its bytes appended and fdatasync'd", runs["again floor"] ?? [])
        rows.append(againPair)
        derived.append(
            (
                "ObjectCache durable set note: × the floor (speed)",
                againPair.1.medianSeconds / max(againPair.0.medianSeconds, 1e-12)
            ))
        // SQLite's autocommit insert against the same floor (measured in the same rounds, in the
        // alternation before): what bounds the ratio of the durable set to SQLite's.
        let sqliteSingle = summarize("sqlite FULL autocommit insert note", runs["single sqlite"] ?? [])
        derived.append(
            (
                "sqlite FULL autocommit insert: × the floor (speed)",
                againPair.1.medianSeconds / max(sqliteSingle.medianSeconds, 1e-12)
            ))
        let one = summarize("ObjectCache durable sets, 1 thread", runs["one thread"] ?? [])
        let four = summarize("ObjectCache durable sets, 4 threads", runs["four threads"] ?? [])
        rows.append((four, one))
        derived.append(
            ("durable sets: 4 threads' throughput × 1 thread's", four.opsPerSecond / max(one.opsPerSecond, 1e-12)))
        let fourCaches = summarize("ObjectCache durable sets, 4 threads on a cache each", runs["four caches"] ?? [])
        rows.append((fourCaches, one))
        derived.append(
            (
                "durable sets: 4 threads on a cache each, throughput × 1 thread's",
                fourCaches.opsPerSecond / max(one.opsPerSecond, 1e-12)
            ))
        let oneFloor = summarize("floor: group-synced appends, 1 thread", runs["one thread floor"] ?? [])
        let fourFloor = summarize("floor: group-synced appends, 4 threads", runs["four threads floor"] ?? [])
        rows.append((fourFloor, oneFloor))
        derived.append(
            (
                "floor: group-synced appends, 4 threads' throughput × 1 thread's",
                fourFloor.opsPerSecond / max(oneFloor.opsPerSecond, 1e-12)
            ))
        let gatheringFloor = summarize(
            "floor: group-synced appends, 4 threads, every one in each group",
            runs["four threads gathering floor"] ?? [])
        rows.append((gatheringFloor, oneFloor))
        derived.append(
            (
                "floor: group-synced appends, 4 threads in each group, throughput × 1 thread's",
                gatheringFloor.opsPerSecond / max(oneFloor.opsPerSecond, 1e-12)
            ))
        // What the target asks of the cache's four threads (three times its one thread) against
        // the most four threads sharing syncs commit on this disk with nothing else to do.
        derived.append(
            (
                "durable sets: 3 × 1 thread's throughput × the gathering floor's 4 threads'",
                3 * one.opsPerSecond / max(gatheringFloor.opsPerSecond, 1e-12)
            ))
        derived += try bytesWrittenPerGet()
        return (rows, derived)
    }

    /// `count` rounds of 500 write-back values and one `save()` (with `batchSet`, one
    /// `set(contentsOf:)` of 500 values), alternating with a transaction of 500 inserts of the
    /// same notes encoded by `JSONEncoder`.
    func batchRounds(
        _ count: Int, cache: ObjectCache<String, SmallNote>, database: SQLiteStore, _ notes: [SmallNote],
        batchSet: Bool = false
    ) throws -> (Run, Run) {
        let encoder = JSONEncoder()
        let prefix = batchSet ? "set" : "batch"
        return try alternating(
            count, chunk: 1,
            first: { round in
                if batchSet {
                    try cache.set(contentsOf: (0..<Self.batch).map { (key: "set-\(round)-\($0)", value: notes[$0]) })
                } else {
                    for i in 0..<Self.batch { cache.setUnsaved(notes[i], forKey: "batch-\(round)-\(i)") }
                    try cache.save()
                }
            },
            second: { round in
                try database.transaction {
                    for i in 0..<Self.batch { database.set("\(prefix)-\(round)-\(i)", [try encoder.encode(notes[i])]) }
                }
            })
    }

    /// Random gets over a packed cache, measured by `/proc/self/io`: bytes handed to `write(2)`
    /// (`wchar`) and bytes sent towards storage (`write_bytes`), per get. Linux only.
    func bytesWrittenPerGet() throws -> [(String, Double)] {
        guard let before = Self.processIO() else { return [] }
        let entries = max(count * 2, 1_000)
        let gets = entries * 10
        let directory = scratch.fresh("gets")
        let cache = try DiskLRUCache(
            directory: directory, appVersion: 1, valueCount: 2, maxSize: Int.max, options: .init(storage: .packed))
        let value = [Data(repeating: 1, count: 40), Data(repeating: 2, count: 280)]
        for i in 0..<entries { try cache.setData(value, forKey: "get-\(i)") }
        try cache.flush()
        settle()
        var generator = SeededGenerator(seed: 17)
        guard let start = Self.processIO() else { return [] }
        for _ in 0..<gets { keep(try cache.data(forKey: "get-\(Int(generator.next() % UInt64(entries)))")) }
        cache.waitForBackgroundWork()
        guard let end = Self.processIO() else { return [] }
        try cache.close()
        _ = before
        return [
            (
                "bytes passed to write(2) per get (\(gets) random gets, \(entries) packed entries)",
                Double(end.wchar - start.wchar) / Double(gets)
            ),
            (
                "bytes written to storage per get (\(gets) random gets, \(entries) packed entries)",
                Double(end.writeBytes - start.writeBytes) / Double(gets)
            ),
        ]
    }

    /// `wchar` and `write_bytes` of `/proc/self/io`; `nil` where there is none.
    static func processIO() -> (wchar: Int, writeBytes: Int)? {
        guard let text = try? String(contentsOfFile: "/proc/self/io", encoding: .utf8) else { return nil }
        var values: [String: Int] = [:]
        for line in text.split(separator: "\n") {
            let parts = line.split(separator: ":")
            if parts.count == 2 { values[String(parts[0])] = Int(parts[1].trimmingCharacters(in: .whitespaces)) }
        }
        guard let wchar = values["wchar"], let writeBytes = values["write_bytes"] else { return nil }
        return (wchar, writeBytes)
    }
}

/// `--workload save-profile`: many rounds of 500 write-back values and one `save()` without
/// syncs, for a profiler; prints the median time of the two parts, and of what a save is made
/// of, measured alone in the same rounds: encoding the 500 notes (the built-in JSON coder) and
/// one engine batch of 500 entries of the same size (packed, no syncs).
struct SaveProfileWorkload {
    let scratch: Scratch

    func run() throws {
        let notes = (0..<DurabilityWorkloads.batch).map(SmallNote.make)
        let cache = try DurabilityWorkloads(count: 0, rounds: 0, scratch: scratch).cache(durable: false)
        let engine = try DiskLRUCache(
            directory: scratch.fresh("save-profile-engine"), appVersion: 1, valueCount: 2, maxSize: Int.max,
            options: .init(storage: .packed))
        let encoder = DirectJSONEncoder()
        let sample = try encoder.encode(notes[0])
        let slots = [Data(repeating: 1, count: 60), sample]
        var times: [[Double]] = Array(repeating: [], count: 4)
        for round in 0..<200 {
            let start = nanoseconds()
            for i in 0..<DurabilityWorkloads.batch { cache.setUnsaved(notes[i], forKey: "batch-\(round)-\(i)") }
            let middle = nanoseconds()
            try cache.save()
            let end = nanoseconds()
            for note in notes { keep(try encoder.encode(note)) }
            let encoded = nanoseconds()
            var batch = DiskLRUCache.WriteBatch()
            for i in 0..<DurabilityWorkloads.batch { batch.setData(slots, forKey: "batch-\(round)-\(i)") }
            let built = nanoseconds()
            try engine.write(batch)
            let written = nanoseconds()
            for (part, (from, to)) in [(start, middle), (middle, end), (end, encoded), (built, written)].enumerated() {
                times[part].append(Double(to - from) / 1e6)
            }
        }
        try cache.close()
        try engine.close()
        let medians = times.map { $0.sorted()[$0.count / 2] }
        print(
            String(
                format: "500 setUnsaved: %.2f ms, save(): %.2f ms; alone: encoding 500 notes %.2f ms, "
                    + "an engine batch of 500 %.2f ms (medians of 200)",
                medians[0], medians[1], medians[2], medians[3]))
    }
}

/// `fdatasync(2)` where there is one (the cache's sync on Linux), `fsync(2)` elsewhere.
private func fsyncData(_ fd: Int32) -> Int32 {
    #if os(Linux)
    return fdatasync(fd)
    #else
    return fsync(fd)
    #endif
}
