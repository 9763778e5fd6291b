import Foundation
import SwiftyCacheCodable
import SwiftyCacheCore

/// `ObjectCache` memory hits alone, for profiling (`--workload memory-profile`, under
/// `perf record`): one thread, then two threads reading distinct halves of the keys, then two
/// threads each on a cache of its own, over `count` ~1 KiB notes all in memory. With `PHASE`
/// set to `one`, `two` or `own` in the environment, only that phase runs, three times as long,
/// so that a profile holds it alone; `async` times a sync and an async loop of one thread.
struct MemoryProfileWorkload {
    let count: Int
    let passes: Int
    let scratch: Scratch

    func run() async throws -> (rows: [(engine: Figure, floor: Figure?)], derived: [(String, Double)]) {
        let count = self.count
        let passes = self.passes
        let keys = (0..<count).map { "note-\($0)" }
        let notes = (0..<count).map(BenchNote.make)
        let caches = try (0..<2).map { index in
            let cache = try ObjectCache<String, BenchNote>(
                directory: scratch.fresh("memory-profile-\(index)"),
                configuration: .init(maxDiskSize: Int.max, memoryLimit: count))
            for i in 0..<count { try cache.set(notes[i], forKey: keys[i]) }
            return cache
        }
        let phase = ProcessInfo.processInfo.environment["PHASE"] ?? "all"
        let phasePasses = phase == "all" ? passes : passes * 3
        // Seconds for `threads` threads, thread `t` reading its block of keys from
        // `cache(t)`; nil for a phase not asked for.
        func time(_ name: String, threads: Int, _ cache: @escaping @Sendable (Int) -> ObjectCache<String, BenchNote>)
            -> Double?
        {
            guard phase == "all" || phase == name else { return nil }
            return onThreads(threads) { thread in
                let block = (count * thread / threads)..<(count * (thread + 1) / threads)
                // Fetched once: a reference fetched per read would be retained per read, and
                // that count is a cache line both threads write.
                let mine = cache(thread)
                for _ in 0..<phasePasses { for i in block { _ = try? mine.value(forKey: keys[i]) } }
            }
        }
        let one = time("one", threads: 1) { _ in caches[0] }
        let two = time("two", threads: 2) { _ in caches[0] }
        let own = time("own", threads: 2) { caches[$0] }
        // One thread's sync loop, then the same loop through the async overload, each calling
        // the cache directly (no closure per read): what the async call itself costs.
        func syncLoop() -> Double {
            let start = nanoseconds()
            for _ in 0..<phasePasses { for i in 0..<count { _ = try? caches[0].value(forKey: keys[i]) } }
            return Double(nanoseconds() - start) / 1e9
        }
        var sync: Double?
        var async: Double?
        if phase == "all" || phase == "async" {
            sync = syncLoop()
            let start = nanoseconds()
            for _ in 0..<phasePasses { for i in 0..<count { _ = try? await caches[0].value(forKey: keys[i]) } }
            async = Double(nanoseconds() - start) / 1e9
        }
        for cache in caches { try await cache.close() }
        let operations = count * phasePasses
        let rows = [
            ("1 thread", one), ("2 threads", two), ("2 threads, a cache each", own), ("1 thread, sync loop", sync),
            ("1 thread, async loop", async),
        ].compactMap {
            name, seconds in
            seconds.map {
                summarize("profile memory hit, \(name)", [Run(operations: operations, seconds: $0, latencies: [])])
            }
        }
        var derived: [(String, Double)] = []
        if let one, let two { derived.append(("profile memory hit: 2 threads / 1", one / two)) }
        if let one, let own { derived.append(("profile memory hit: 2 threads / 1, a cache each", one / own)) }
        if let sync, let async { derived.append(("profile memory hit: async cost / sync, direct loops", async / sync)) }
        return (rows.map { ($0, nil) }, derived)
    }
}
