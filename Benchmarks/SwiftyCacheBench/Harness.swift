import Foundation
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Takes a value the optimizer cannot see used, so that producing it (a copy, its retains) is
/// not optimized away from a timed loop.
@inline(never)
func keep<T>(_ value: T) {
    withExtendedLifetime(value) {}
}

/// One timed run of a workload: how many operations, how long, and each operation's latency.
struct Run {
    var operations: Int
    var seconds: Double
    /// Per-operation latencies in nanoseconds; empty for workloads timed in batches.
    var latencies: [Double]
    /// Seconds per operation in each chunk when run by `alternating`, in order; the other
    /// contender's run holds the chunks that ran next to these.
    var chunks: [Double] = []
}

/// The figures of one workload over all rounds.
struct Figure: Codable {
    var name: String
    var operations: Int
    var rounds: Int
    /// Operations per second: median, lowest and highest round.
    var opsPerSecond: Double
    var opsPerSecondLow: Double
    var opsPerSecondHigh: Double
    /// Latency percentiles in microseconds, over every operation of every round.
    var p50Microseconds: Double?
    var p99Microseconds: Double?
    /// Median seconds per round, for workloads that are one long operation (reopen, save).
    var medianSeconds: Double
    /// Against a baseline run alternately with it: the median over every pair of neighbouring
    /// chunks of (this chunk's time / the baseline chunk's time), with the quartiles. A stall
    /// of the disk falls in a few pairs and moves the median little.
    var pairedCostRatio: Double?
    var pairedCostRatioLow: Double?
    var pairedCostRatioHigh: Double?
    /// The median over every chunk of every round of the seconds per operation, for workloads
    /// run by `alternating`: a per-operation cost that a slow round does not drag.
    var medianChunkSecondsPerOperation: Double?
}

/// A nanosecond clock without allocation.
@inline(__always)
func nanoseconds() -> UInt64 {
    var time = timespec()
    clock_gettime(CLOCK_MONOTONIC, &time)
    return UInt64(time.tv_sec) * 1_000_000_000 + UInt64(time.tv_nsec)
}

/// Times `count` calls of `body`, recording each one's latency when `perOperation` is set.
func timed(_ count: Int, perOperation: Bool = true, _ body: (Int) throws -> Void) rethrows -> Run {
    var latencies: [Double] = []
    if perOperation { latencies.reserveCapacity(count) }
    let start = nanoseconds()
    if perOperation {
        for i in 0..<count {
            let before = nanoseconds()
            try body(i)
            latencies.append(Double(nanoseconds() - before))
        }
    } else {
        for i in 0..<count { try body(i) }
    }
    let seconds = Double(nanoseconds() - start) / 1e9
    return Run(operations: count, seconds: seconds, latencies: latencies)
}

/// Times `count` operations of two contenders, alternating in chunks of `chunk` operations (the
/// order flipping every chunk), so that drift in the machine's speed, which on this file system
/// can change severalfold within a minute, falls on both alike.
func alternating(
    _ count: Int, chunk: Int = 250, first: (Int) throws -> Void, second: (Int) throws -> Void
) rethrows -> (Run, Run) {
    var latencies: ([Double], [Double]) = ([], [])
    latencies.0.reserveCapacity(count)
    latencies.1.reserveCapacity(count)
    var seconds = (0.0, 0.0)
    var chunks: ([Double], [Double]) = ([], [])
    var start = 0
    var flip = false
    while start < count {
        let end = min(start + chunk, count)
        for side in flip ? [1, 0] : [0, 1] {
            let begin = nanoseconds()
            for i in start..<end {
                let before = nanoseconds()
                if side == 0 { try first(i) } else { try second(i) }
                let elapsed = Double(nanoseconds() - before)
                if side == 0 { latencies.0.append(elapsed) } else { latencies.1.append(elapsed) }
            }
            let elapsed = Double(nanoseconds() - begin) / 1e9
            let perOperation = elapsed / Double(end - start)
            if side == 0 {
                seconds.0 += elapsed
                chunks.0.append(perOperation)
            } else {
                seconds.1 += elapsed
                chunks.1.append(perOperation)
            }
        }
        flip.toggle()
        start = end
    }
    return (
        Run(operations: count, seconds: seconds.0, latencies: latencies.0, chunks: chunks.0),
        Run(operations: count, seconds: seconds.1, latencies: latencies.1, chunks: chunks.1)
    )
}

/// Times `count` operations of a synchronous and an `async` contender, alternating in chunks
/// of `chunk` operations (the order flipping every chunk), as `alternating` does, but timing
/// whole chunks only: a clock read per operation would add its own cost to operations of a few
/// hundred nanoseconds. Each contender is called once per chunk with the chunk's range and
/// loops over it itself: an `async` closure called per operation allocates a frame for the
/// call on the task every time, a cost of the harness that the API called directly in a loop
/// does not have (measured: 1.42 against 1.07–1.11 for memory hits).
func alternatingAsync(
    _ count: Int, chunk: Int = 2_000, sync: (Range<Int>) -> Void, async: (Range<Int>) async -> Void
) async -> (sync: Run, async: Run) {
    await alternatingBothAsync(count, chunk: chunk, first: { sync($0) }, second: async)
}

/// As `alternatingAsync`, for two `async` contenders.
func alternatingBothAsync(
    _ count: Int, chunk: Int = 2_000, first: (Range<Int>) async throws -> Void,
    second: (Range<Int>) async throws -> Void
) async rethrows -> (Run, Run) {
    var runs = (
        Run(operations: count, seconds: 0, latencies: []), Run(operations: count, seconds: 0, latencies: [])
    )
    var start = 0
    var flip = false
    while start < count {
        let end = min(start + chunk, count)
        for side in flip ? [1, 0] : [0, 1] {
            let begin = nanoseconds()
            if side == 0 { try await first(start..<end) } else { try await second(start..<end) }
            let elapsed = Double(nanoseconds() - begin) / 1e9
            if side == 0 {
                runs.0.seconds += elapsed
                runs.0.chunks.append(elapsed / Double(end - start))
            } else {
                runs.1.seconds += elapsed
                runs.1.chunks.append(elapsed / Double(end - start))
            }
        }
        flip.toggle()
        start = end
    }
    return runs
}

/// Times `count` operations of several contenders, in chunks of `chunk` operations, each
/// chunk's order rotated, so that drift in the machine's speed falls on all of them alike.
func interleaved(_ count: Int, chunk: Int = 250, _ contenders: [(Int) throws -> Void]) throws -> [Run] {
    var runs = contenders.map { _ in Run(operations: count, seconds: 0, latencies: [], chunks: []) }
    for index in runs.indices { runs[index].latencies.reserveCapacity(count) }
    var start = 0
    var rotation = 0
    while start < count {
        let end = min(start + chunk, count)
        for step in contenders.indices {
            let side = (step + rotation) % contenders.count
            let begin = nanoseconds()
            for i in start..<end {
                let before = nanoseconds()
                try contenders[side](i)
                runs[side].latencies.append(Double(nanoseconds() - before))
            }
            let elapsed = Double(nanoseconds() - begin) / 1e9
            runs[side].seconds += elapsed
            runs[side].chunks.append(elapsed / Double(end - start))
        }
        rotation += 1
        start = end
    }
    return runs
}

/// Summaries of a workload and its baseline, run together by `alternating`, with the paired
/// cost ratio filled in on the workload's figure.
func summarizePair(_ name: String, _ runs: [Run], baseline baselineName: String, _ baselineRuns: [Run]) -> (
    Figure, Figure
) {
    var figure = summarize(name, runs)
    let baseline = summarize(baselineName, baselineRuns)
    var ratios: [Double] = []
    for (run, base) in zip(runs, baselineRuns) {
        for (a, b) in zip(run.chunks, base.chunks) where b > 0 { ratios.append(a / b) }
    }
    ratios.sort()
    if !ratios.isEmpty {
        figure.pairedCostRatio = ratios[ratios.count / 2]
        figure.pairedCostRatioLow = ratios[ratios.count / 4]
        figure.pairedCostRatioHigh = ratios[min(ratios.count - 1, ratios.count * 3 / 4)]
    }
    return (figure, baseline)
}

func summarize(_ name: String, _ runs: [Run]) -> Figure {
    let rates = runs.isEmpty ? [0] : runs.map { Double($0.operations) / max($0.seconds, 1e-12) }.sorted()
    let seconds = runs.isEmpty ? [0] : runs.map(\.seconds).sorted()
    let latencies = runs.flatMap(\.latencies).sorted()
    func percentile(_ p: Double) -> Double? {
        guard !latencies.isEmpty else { return nil }
        return latencies[min(latencies.count - 1, Int(Double(latencies.count) * p))] / 1000
    }
    let chunks = runs.flatMap(\.chunks).sorted()
    return Figure(
        name: name, operations: runs.first?.operations ?? 0, rounds: runs.count,
        opsPerSecond: rates[rates.count / 2], opsPerSecondLow: rates.first ?? 0, opsPerSecondHigh: rates.last ?? 0,
        p50Microseconds: percentile(0.5), p99Microseconds: percentile(0.99), medianSeconds: seconds[seconds.count / 2],
        medianChunkSecondsPerOperation: chunks.isEmpty ? nil : chunks[chunks.count / 2])
}

/// Writes the dirty pages earlier work left, so that their writeback does not run (on the
/// other core, through the same caches and memory) during the next timings.
func settle() {
    guard settlesDisk.load(ordering: .relaxed) else { return }
    sync()
}

/// Whether `settle()` flushes the machine's dirty pages: not in a smoke run (`--quick`), whose
/// figures nobody reads and where, after CI's builds, a `sync()` waits seconds for their files.
let settlesDisk = Atomic<Bool>(true)

/// A fresh directory per round: this machine's file system slows down creating files where
/// thousands were just deleted, so rounds never reuse one.
final class Scratch {
    let root: URL
    private var counter = 0

    init() {
        root = FileManager.default.temporaryDirectory.appending(path: "swiftycache-bench-\(getpid())")
        try? FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
    }

    func fresh(_ label: String) -> URL {
        counter += 1
        return root.appending(path: "\(counter)-\(label)", directoryHint: .isDirectory)
    }

    func removeAll() {
        try? FileManager.default.removeItem(at: root)
    }
}

/// The peak resident set size of this process, in MiB.
func peakRSSMegabytes() -> Double {
    var usage = rusage()
    #if os(Linux)
    getrusage(RUSAGE_SELF.rawValue, &usage)
    #else
    getrusage(RUSAGE_SELF, &usage)
    #endif
    #if os(Linux)
    return Double(usage.ru_maxrss) / 1024  // KiB on Linux
    #else
    return Double(usage.ru_maxrss) / 1_048_576  // bytes on Darwin
    #endif
}

/// Deterministic pseudo-random bytes (SplitMix64), so every run writes the same data.
struct SeededGenerator: RandomNumberGenerator {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

func randomData(_ count: Int, using generator: inout SeededGenerator) -> Data {
    var bytes: [UInt8] = []
    bytes.reserveCapacity(count + 8)
    while bytes.count < count {
        let word = generator.next()
        for shift in stride(from: 0, to: 64, by: 8) { bytes.append(UInt8(truncatingIfNeeded: word >> UInt64(shift))) }
    }
    return Data(bytes.prefix(count))
}
