import Dispatch
import Foundation
import SwiftyCacheCodable
import SwiftyCacheCore

/// Reads that scale across threads, `async` against sync, and the snapshot read path against
/// the one-call read and the floor: the rows of the latency and concurrency targets.
///
/// - Readers: 1, 2, 4 and 8 threads read distinct keys (thread `t` takes the `t`-th of
///   `threads` blocks of keys) of a warm cache, started together; the figure is the throughput
///   of all of them, and each row's baseline is the one-thread row. In the same rounds, two
///   threads each read the same block of keys from a cache of their own (two caches with the
///   same contents in two directories): nothing of the cache is shared, so that row is what
///   this machine allows two readers, the ceiling for the shared cache's two readers.
/// - Async: one task awaits reads one after another, against the same reads called
///   synchronously, alternating in eight pairs of chunks a round (at least 2,000 reads each);
///   the ratio is the median over the pairs of neighbouring chunks.
struct ConcurrencyWorkloads {
    let count: Int
    let rounds: Int
    let scratch: Scratch
    static let threadCounts = [1, 2, 4, 8]

    /// The four caches the readers read, in fresh directories named after `name`: engine files
    /// and packed (2 slots), `ObjectCache` on disk only and with every note in memory.
    private func openCaches(_ name: String) throws -> (
        files: DiskLRUCache, packed: DiskLRUCache, onDisk: ObjectCache<String, BenchNote>,
        inMemory: ObjectCache<String, BenchNote>
    ) {
        (
            try DiskLRUCache(
                directory: scratch.fresh("\(name)-files"), appVersion: 1, valueCount: 2, maxSize: Int.max,
                options: .init(storage: .files)),
            try DiskLRUCache(
                directory: scratch.fresh("\(name)-packed"), appVersion: 1, valueCount: 2, maxSize: Int.max,
                options: .init(storage: .packed)),
            try ObjectCache<String, BenchNote>(
                directory: scratch.fresh("\(name)-object"), configuration: .init(maxDiskSize: Int.max, memoryLimit: 0)),
            try ObjectCache<String, BenchNote>(
                directory: scratch.fresh("\(name)-memory"),
                configuration: .init(maxDiskSize: Int.max, memoryLimit: count))
        )
    }

    /// A read under test: `read(i)` reads key number `i`.
    private struct Reader {
        var name: String
        var passes: Int
        var read: @Sendable (Int) -> Void
        /// The async row's two sides: `syncLoop(r)` and `asyncLoop(r)` read key number
        /// `i % count` for each `i` in `r`, calling the API directly in their own loop.
        var syncLoop: (@Sendable (Range<Int>) -> Void)?
        var asyncLoop: (@Sendable (Range<Int>) async -> Void)?
        /// `readOwn(t, i)`: thread `t` reads key number `i` from a cache of its own.
        var readOwn: @Sendable (Int, Int) -> Void
    }

    func run() async throws -> (rows: [(engine: Figure, floor: Figure?)], derived: [(String, Double)]) {
        var generator = SeededGenerator(seed: 7)
        let pool = (0..<64).map { _ in [randomData(1024, using: &generator), randomData(1024, using: &generator)] }
        let keys = (0..<count).map { "key-\($0)" }
        let notes = (0..<count).map(BenchNote.make)
        let noteKeys = (0..<count).map { "note-\($0)" }
        let count = self.count

        // The shared caches, and the second thread's own for the shared-nothing rows.
        let (files, packed, onDisk, inMemory) = try openCaches("readers")
        let (files2, packed2, onDisk2, inMemory2) = try openCaches("readers-2")
        // Not async, so that the synchronous overloads are the ones called.
        func fill() throws {
            for i in 0..<count {
                for cache in [files, packed, files2, packed2] { try cache.setData(pool[i % 64], forKey: keys[i]) }
                for cache in [onDisk, inMemory, onDisk2, inMemory2] { try cache.set(notes[i], forKey: noteKeys[i]) }
            }
        }
        func closeAll() throws {
            for cache in [files, packed, files2, packed2] { try cache.close() }
            for cache in [onDisk, inMemory, onDisk2, inMemory2] { try cache.close() }
        }
        try fill()
        settle()

        let keyData = keys.map { Data($0.utf8) }
        let readers = [
            // No shared state at all: how far this machine scales by itself.
            Reader(
                name: "machine: SHA-256 of the key", passes: 10, read: { _ = SHA256.hexDigest(keyData[$0]) },
                readOwn: { _ = SHA256.hexDigest(keyData[$1]) }),
            Reader(
                name: "engine get files", passes: 2, read: { _ = try? files.data(forKey: keys[$0]) },
                syncLoop: { for i in $0 { _ = try? files.data(forKey: keys[i % count]) } },
                asyncLoop: { for i in $0 { _ = try? await files.data(forKey: keys[i % count]) } },
                readOwn: { _ = try? ($0 == 0 ? files : files2).data(forKey: keys[$1]) }),
            Reader(
                name: "engine get packed", passes: 6, read: { _ = try? packed.data(forKey: keys[$0]) },
                syncLoop: { for i in $0 { _ = try? packed.data(forKey: keys[i % count]) } },
                asyncLoop: { for i in $0 { _ = try? await packed.data(forKey: keys[i % count]) } },
                readOwn: { _ = try? ($0 == 0 ? packed : packed2).data(forKey: keys[$1]) }),
            Reader(
                name: "object disk get", passes: 2, read: { _ = try? onDisk.value(forKey: noteKeys[$0]) },
                syncLoop: { for i in $0 { _ = try? onDisk.value(forKey: noteKeys[i % count]) } },
                asyncLoop: { for i in $0 { _ = try? await onDisk.value(forKey: noteKeys[i % count]) } },
                readOwn: { _ = try? ($0 == 0 ? onDisk : onDisk2).value(forKey: noteKeys[$1]) }),
            Reader(
                name: "object memory hit", passes: 40, read: { _ = try? inMemory.value(forKey: noteKeys[$0]) },
                syncLoop: { for i in $0 { _ = try? inMemory.value(forKey: noteKeys[i % count]) } },
                asyncLoop: { for i in $0 { _ = try? await inMemory.value(forKey: noteKeys[i % count]) } },
                readOwn: { _ = try? ($0 == 0 ? inMemory : inMemory2).value(forKey: noteKeys[$1]) }),
        ]

        var rows: [(engine: Figure, floor: Figure?)] = []
        var derived: [(String, Double)] = []
        for reader in readers {
            var runs: [Int: [Run]] = [:]
            var ownRuns: [Run] = []
            for round in -1..<rounds {  // round -1 warms up
                for threads in Self.threadCounts {
                    let operations = count * reader.passes
                    // Thread `t` reads the `t`-th block of keys: neighbouring keys' values sit next
                    // to each other in memory, and interleaving them across threads would bounce
                    // their reference counts' cache lines between cores.
                    let seconds = onThreads(threads) { thread in
                        let block = (count * thread / threads)..<(count * (thread + 1) / threads)
                        for _ in 0..<reader.passes {
                            for i in block { reader.read(i) }
                        }
                    }
                    if round >= 0 {
                        runs[threads, default: []].append(Run(operations: operations, seconds: seconds, latencies: []))
                    }
                }
                // Two threads, a cache each, reading the blocks the shared cache's two readers read.
                let operations = count * reader.passes
                let seconds = onThreads(2) { thread in
                    let block = (count * thread / 2)..<(count * (thread + 1) / 2)
                    for _ in 0..<reader.passes {
                        for i in block { reader.readOwn(thread, i) }
                    }
                }
                if round >= 0 { ownRuns.append(Run(operations: operations, seconds: seconds, latencies: [])) }
            }
            let single = summarize("\(reader.name), 1 thread", runs[1] ?? [])
            rows.append((single, nil))
            for threads in Self.threadCounts.dropFirst() {
                rows.append((summarize("\(reader.name), \(threads) threads", runs[threads] ?? []), single))
            }
            let own = summarize("\(reader.name), 2 threads, a cache each", ownRuns)
            rows.append((own, single))
            let rate = { (threads: Int) in summarize("", runs[threads] ?? []).opsPerSecond }
            derived.append(("\(reader.name): 2 threads / 1", rate(2) / max(rate(1), 1e-12)))
            derived.append(("\(reader.name): 2 threads / 1, a cache each", own.opsPerSecond / max(rate(1), 1e-12)))
            derived.append(("\(reader.name): 8 threads / 2", rate(8) / max(rate(2), 1e-12)))

            guard let syncLoop = reader.syncLoop, let asyncLoop = reader.asyncLoop else { continue }
            var syncRuns: [Run] = []
            var asyncRuns: [Run] = []
            let operations = min(count, 20_000) * reader.passes
            for round in -1..<rounds {
                // Alternating chunks, so that the machine's drift (a round of a whole pass
                // could run a third faster or slower than the next) falls on both alike.
                // Eight pairs of chunks a round: chunks of a few hundred microseconds (2,000
                // memory hits) measured this VM's jitter more than the reads.
                let (sync, asyncRun) = await alternatingAsync(
                    operations, chunk: max(2_000, operations / 8), sync: syncLoop, async: asyncLoop)
                guard round >= 0 else { continue }
                syncRuns.append(sync)
                asyncRuns.append(asyncRun)
            }
            let (asyncFigure, syncFigure) = summarizePair(
                "\(reader.name), async", asyncRuns, baseline: "\(reader.name), sync", syncRuns)
            rows.append((asyncFigure, syncFigure))
            // The median of the paired chunks' cost ratios: robust to a slow stretch of either.
            derived.append(("\(reader.name): async cost / sync", asyncFigure.pairedCostRatio ?? .nan))
        }

        // The snapshot path against the one-call read and the floor, files storage.
        let floor = Floor(directory: scratch.fresh("snapshot-floor"), valueCount: 2)
        for i in 0..<count { floor.set(keys[i], pool[i % 64]) }
        var snapshotRuns: [Run] = []
        var oneCallRuns: [Run] = []
        var floorRuns: [Run] = []
        for round in -1..<rounds {
            let runs = try interleaved(
                count,
                [
                    { i in
                        guard let snapshot = try files.snapshot(forKey: keys[i]) else { return }
                        _ = try snapshot.readData(at: 0)
                        _ = try snapshot.readData(at: 1)
                        snapshot.close()
                    },
                    { _ = try files.data(forKey: keys[$0]) },
                    { _ = floor.get(keys[$0]) },
                ])
            guard round >= 0 else { continue }
            snapshotRuns.append(runs[0])
            oneCallRuns.append(runs[1])
            floorRuns.append(runs[2])
        }
        let floorFigure = summarize("floor get 2 × 1 KiB", floorRuns)
        let snapshotFigure = summarize("engine snapshot + data(at:) + close", snapshotRuns)
        let oneCallFigure = summarize("engine data(forKey:)", oneCallRuns)
        rows.append((snapshotFigure, floorFigure))
        rows.append((oneCallFigure, floorFigure))
        derived.append(
            ("snapshot path / floor throughput", snapshotFigure.opsPerSecond / max(floorFigure.opsPerSecond, 1e-12)))
        derived.append(
            ("data(forKey:) / floor throughput", oneCallFigure.opsPerSecond / max(floorFigure.opsPerSecond, 1e-12)))

        try closeAll()
        return (rows, derived)
    }
}

/// Runs `body(t)` on `threads` new threads started together, and returns the seconds from the
/// start until the last one finished.
func onThreads(_ threads: Int, _ body: @escaping @Sendable (Int) -> Void) -> Double {
    let ready = DispatchSemaphore(value: 0)
    let go = DispatchSemaphore(value: 0)
    let done = DispatchGroup()
    for thread in 0..<threads {
        done.enter()
        Thread {
            ready.signal()
            go.wait()
            body(thread)
            done.leave()
        }.start()
    }
    for _ in 0..<threads { ready.wait() }
    let start = nanoseconds()
    for _ in 0..<threads { go.signal() }
    done.wait()
    return Double(nanoseconds() - start) / 1e9
}
