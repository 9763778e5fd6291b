import Foundation
import SwiftyCacheCore

/// Engine against floor, operation by operation, in the same rounds.
struct EngineWorkloads {
    let count: Int
    let valueSize: Int
    let rounds: Int
    let scratch: Scratch

    /// Figures by workload, engine and floor side by side.
    func run() throws -> [(engine: Figure, floor: Figure?)] {
        var generator = SeededGenerator(seed: 42)
        let pool = (0..<64).map { _ in
            [randomData(valueSize, using: &generator), randomData(valueSize, using: &generator)]
        }
        let keys = (0..<count).map { "key-\($0)" }
        var order = Array(0..<count)
        order.shuffle(using: &generator)
        var engine: [String: [Run]] = [:]
        var floor: [String: [Run]] = [:]

        // Warm-up round, not recorded.
        for round in -1..<rounds {
            let cacheDirectory = scratch.fresh("engine-\(valueSize)")
            var cache = try DiskLRUCache(directory: cacheDirectory, appVersion: 1, valueCount: 2, maxSize: Int.max)
            let bare = Floor(directory: cacheDirectory, valueCount: 2)
            var results: [(String, Run, Run)] = []
            let (se, sf) = try alternating(
                count, first: { try cache.setData(pool[$0 % 64], forKey: keys[$0]) },
                second: { bare.set(keys[$0], pool[$0 % 64]) })
            results.append(("set", se, sf))
            let (ge, gf) = try alternating(
                count, first: { _ = try cache.data(forKey: keys[order[$0]]) },
                second: { _ = bare.get(keys[order[$0]]) })
            results.append(("get", ge, gf))
            let (oe, of) = try alternating(
                count, first: { try cache.setData(pool[($0 + 1) % 64], forKey: keys[order[$0]]) },
                second: { bare.set(keys[order[$0]], pool[($0 + 1) % 64]) })
            results.append(("overwrite", oe, of))
            let miss = try timed(count) { _ = try cache.snapshot(forKey: "absent-\($0)") }
            try cache.close()
            let reopen = try timed(1, perOperation: false) { _ in
                cache = try DiskLRUCache(directory: cacheDirectory, appVersion: 1, valueCount: 2, maxSize: Int.max)
            }
            let (re, rf) = try alternating(
                count, first: { _ = try cache.removeValue(forKey: keys[order[$0]]) },
                second: { bare.remove(keys[order[$0]]) })
            results.append(("remove", re, rf))
            try cache.close()

            // Churn: 4N new keys with room for a quarter of them; eviction on.
            let entrySize = 2 * valueSize
            let churnDirectory = scratch.fresh("churn-\(valueSize)")
            let churnCache = try DiskLRUCache(
                directory: churnDirectory, appVersion: 1, valueCount: 2, maxSize: count * entrySize)
            let churnFloor = Floor(directory: churnDirectory, valueCount: 2)
            let (ce, cf) = try alternatingChurn(
                count: count, pool: pool, cache: churnCache, set: churnFloor.set, remove: churnFloor.remove)
            results.append(("churn", ce, cf))
            try churnCache.close()
            guard round >= 0 else { continue }
            for (name, e, f) in results {
                engine[name, default: []].append(e)
                floor[name, default: []].append(f)
            }
            engine["miss", default: []].append(miss)
            engine["reopen", default: []].append(reopen)
        }
        let label = valueSize >= 1024 ? "\(valueSize / 1024) KiB" : "\(valueSize) B"
        return ["set", "get", "miss", "overwrite", "remove", "reopen", "churn"].compactMap { name in
            guard let runs = engine[name] else { return nil }
            guard let floorRuns = floor[name] else { return (summarize("engine \(name) \(label)", runs), nil) }
            let (figure, baseline) = summarizePair(
                "engine \(name) \(label)", runs, baseline: "floor \(name) \(label)", floorRuns)
            return (figure, baseline)
        }
    }
}

/// Churn: 4 × `count` new keys into `cache`, which has room for a quarter of them (eviction
/// on), alternating with a baseline that inserts each key and deletes the one `count` before.
func alternatingChurn(
    count: Int, pool: [[Data]], cache: DiskLRUCache, set: (String, [Data]) -> Void, remove: (String) -> Void
) throws -> (Run, Run) {
    try alternating(
        4 * count, first: { try cache.setData(pool[$0 % pool.count], forKey: "churn-\($0)") },
        second: { i in
            set("churn-\(i)", pool[i % pool.count])
            if i >= count { remove("churn-\(i - count)") }
        })
}

/// Set, get and reopen at several sizes: the per-operation cost must stay flat.
struct ScalingWorkloads {
    let sizes: [Int]
    let rounds: Int
    let scratch: Scratch

    /// Per-operation (per-entry, for reopen) time at the largest size over the smallest, for
    /// the engine and the floor: from the median chunk where the workload alternated with the
    /// floor, else from the median round.
    static func flatness(_ figures: [(engine: Figure, floor: Figure?)], sizes: [Int]) -> [(String, Double)] {
        guard let small = sizes.min(), let large = sizes.max(), small < large else { return [] }
        func perOperation(_ name: String, _ size: Int, floor: Bool) -> Double? {
            guard let pair = figures.first(where: { $0.engine.name == "scaling \(name) \(size)" }),
                let figure = floor ? pair.floor : pair.engine
            else { return nil }
            return figure.medianChunkSecondsPerOperation ?? figure.medianSeconds / Double(size)
        }
        var ratios: [(String, Double)] = []
        for name in ["set", "get", "reopen"] {
            let unit = name == "reopen" ? "entry" : "operation"
            for floor in [false, true] {
                guard let a = perOperation(name, small, floor: floor), let b = perOperation(name, large, floor: floor),
                    a > 0
                else { continue }
                ratios.append(
                    ("scaling \(floor ? "floor " : "")\(name): per-\(unit) cost at \(large) / at \(small)", b / a))
            }
        }
        return ratios
    }

    func run() throws -> [(engine: Figure, floor: Figure?)] {
        var generator = SeededGenerator(seed: 7)
        let pool = (0..<64).map { _ in [randomData(1024, using: &generator), randomData(1024, using: &generator)] }
        var results: [(engine: Figure, floor: Figure?)] = []
        for size in sizes {
            let keys = (0..<size).map { "scale-\($0)" }
            var order = Array(0..<size)
            order.shuffle(using: &generator)
            var engine: [String: [Run]] = [:]
            var floor: [String: [Run]] = [:]
            for round in -1..<rounds {  // round -1 warms up and is not recorded
                let directory = scratch.fresh("scale-\(size)")
                let cache = try DiskLRUCache(directory: directory, appVersion: 1, valueCount: 2, maxSize: Int.max)
                let bare = Floor(directory: directory, valueCount: 2)
                let (se, sf) = try alternating(
                    size, first: { try cache.setData(pool[$0 % 64], forKey: keys[$0]) },
                    second: { bare.set(keys[$0], pool[$0 % 64]) })
                let (ge, gf) = try alternating(
                    size, first: { _ = try cache.data(forKey: keys[order[$0]]) },
                    second: { _ = bare.get(keys[order[$0]]) })
                try cache.close()
                // The median of five reopens: one reopen of 1k entries takes well under a
                // millisecond, where a single hiccup of the machine would dominate.
                let reopens = try (0..<5).map { _ in try timedReopen(directory) }
                let reopen = reopens.sorted { $0.seconds < $1.seconds }[reopens.count / 2]
                guard round >= 0 else { continue }
                engine["set", default: []].append(se)
                floor["set", default: []].append(sf)
                engine["get", default: []].append(ge)
                floor["get", default: []].append(gf)
                engine["reopen", default: []].append(reopen)
            }
            for name in ["set", "get", "reopen"] {
                guard let floorRuns = floor[name] else {
                    results.append((summarize("scaling \(name) \(size)", engine[name] ?? []), nil))
                    continue
                }
                let (figure, baseline) = summarizePair(
                    "scaling \(name) \(size)", engine[name] ?? [], baseline: "scaling floor \(name) \(size)", floorRuns)
                results.append((figure, baseline))
            }
        }
        return results
    }
}

/// The cost of durability mode: sets with `fsync` on commit against the default.
struct DurabilityWorkload {
    let count: Int
    let rounds: Int
    let scratch: Scratch

    func run() throws -> [(engine: Figure, floor: Figure?)] {
        var generator = SeededGenerator(seed: 11)
        let pool = (0..<16).map { _ in [randomData(1024, using: &generator), randomData(1024, using: &generator)] }
        var synced: [Run] = []
        var buffered: [Run] = []
        for round in -1..<rounds {  // round -1 warms up and is not recorded
            let syncedCache = try DiskLRUCache(
                directory: scratch.fresh("durable"), appVersion: 1, valueCount: 2, maxSize: Int.max,
                options: DiskLRUCache.Options(syncsWrites: true))
            let bufferedCache = try DiskLRUCache(
                directory: scratch.fresh("buffered"), appVersion: 1, valueCount: 2, maxSize: Int.max)
            let runSynced = { try timed(count) { try syncedCache.setData(pool[$0 % 16], forKey: "d\($0)") } }
            let runBuffered = { try timed(count) { try bufferedCache.setData(pool[$0 % 16], forKey: "d\($0)") } }
            // The order flips each round.
            let syncedRun: Run
            let bufferedRun: Run
            if round % 2 == 0 {
                syncedRun = try runSynced()
                bufferedRun = try runBuffered()
            } else {
                bufferedRun = try runBuffered()
                syncedRun = try runSynced()
            }
            guard round >= 0 else { continue }
            synced.append(syncedRun)
            buffered.append(bufferedRun)
        }
        return [(summarize("engine set 1 KiB, syncsWrites", synced), summarize("engine set 1 KiB, default", buffered))]
    }
}

/// Reopening one cache of `count` entries, several times, in each storage: after a clean close
/// (the saved index is loaded) and after a crash (the journal is replayed); and the heap the
/// index takes per entry.
struct ReopenWorkload {
    let count: Int
    let rounds: Int
    let scratch: Scratch

    func run() throws -> (rows: [(engine: Figure, floor: Figure?)], derived: [(String, Double)]) {
        var generator = SeededGenerator(seed: 5)
        let pool = (0..<16).map { _ in [randomData(64, using: &generator), randomData(64, using: &generator)] }
        var rows: [(engine: Figure, floor: Figure?)] = []
        var derived: [(String, Double)] = []
        for storage in [DiskLRUCache.Storage.files, .packed] {
            let name = storage.inlineLimit == nil ? "files" : "packed"
            let directory = scratch.fresh("reopen-\(name)")
            let options = DiskLRUCache.Options(storage: storage)
            let cache = try DiskLRUCache(
                directory: directory, appVersion: 1, valueCount: 2, maxSize: Int.max, options: options)
            for i in 0..<count { try cache.setData(pool[i % 16], forKey: "reopen-\(i)") }
            try cache.close()
            _ = try timedReopen(directory, options: options)  // warm-up
            let clean = try (0..<rounds).map { _ in try timedReopen(directory, options: options) }
            let crashed = try (0..<rounds).map { _ in try timedReopen(directory, options: options, crashing: true) }
            rows.append((summarize("\(name) reopen of \(count) entries, after close", clean), nil))
            rows.append((summarize("\(name) reopen of \(count) entries, after a crash", crashed), nil))
            // In a fresh process: in this one, the open would reuse memory the reopens above
            // freed, already resident, and the figure would read 0.
            let resident = try ScaleWorkload.runChild([
                Self.residentChildFlag, name, directory.path(percentEncoded: false),
            ])
            let perEntry = resident / Double(count)
            derived.append(("index memory per entry (resident bytes), \(name) (key of 12 bytes, 2 slots)", perEntry))
        }
        return (rows, derived)
    }

    static let residentChildFlag = "--resident-child"

    /// The child of ``residentChildFlag``: opens the cache in `directory` (`files` or `packed`
    /// storage) in a process that has done nothing else, and prints the resident bytes the
    /// open added (an upper bound of the index's memory: the open's buffers are in it).
    static func residentChild(storage: String, directory: URL) throws {
        let options = DiskLRUCache.Options(storage: storage == "files" ? .files : .packed)
        let before = residentBytes()
        let opened = try DiskLRUCache(
            directory: directory, appVersion: 1, valueCount: 2, maxSize: Int.max, options: options)
        let added = residentBytes() - before
        try opened.close()
        print(String(added))
    }
}

/// Opens the cache in `directory` (timed) and closes it again (not timed); with `crashing`, it
/// ends as a killed process would, so that the next open replays the journal.
func timedReopen(_ directory: URL, options: DiskLRUCache.Options = .init(), crashing: Bool = false) throws -> Run {
    try timedReopen(directory, options: options, crashing: crashing, keepingOpen: false).run
}

/// A timed open of the cache in `directory`; the cache is returned open when `keepingOpen`,
/// else closed (or crashed) after the timing.
func timedReopen(
    _ directory: URL, options: DiskLRUCache.Options = .init(), crashing: Bool = false, keepingOpen: Bool
) throws -> (run: Run, cache: DiskLRUCache?) {
    var cache: DiskLRUCache?
    let run = try timed(1, perOperation: false) { _ in
        cache = try DiskLRUCache(directory: directory, appVersion: 1, valueCount: 2, maxSize: Int.max, options: options)
    }
    if keepingOpen { return (run, cache) }
    if crashing { cache?.simulateCrash() } else { try cache?.close() }
    return (run, nil)
}

/// The process's resident memory now (`/proc/self/statm`), in bytes; 0 where it is not
/// available. Measured around one open, it bounds the index's memory from above.
func residentBytes() -> Int {
    guard let text = try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8) else { return 0 }
    let fields = text.split(separator: " ")
    guard fields.count > 1, let pages = Int(fields[1]) else { return 0 }
    return pages * Int(sysconf(Int32(_SC_PAGESIZE)))
}
