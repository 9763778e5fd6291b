import Foundation
import SwiftyCacheCodable
import SwiftyCacheCore

/// Packed storage alone, for profiling (`--workload packed-profile`, under `perf record`): sets,
/// then five passes of gets, of 2 slots of `valueSize` bytes; then `ObjectCache` memory hits.
struct PackedProfileWorkload {
    let count: Int
    let valueSize: Int
    let scratch: Scratch

    func run() throws -> [(engine: Figure, floor: Figure?)] {
        var generator = SeededGenerator(seed: 3)
        let pool = (0..<64).map { _ in
            [randomData(valueSize, using: &generator), randomData(valueSize, using: &generator)]
        }
        let keys = (0..<count).map { "key-\($0)" }
        let cache = try DiskLRUCache(
            directory: scratch.fresh("packed-profile"), appVersion: 1, valueCount: 2, maxSize: Int.max,
            options: .init(storage: .packed))
        let sets = try timed(count, perOperation: false) { try cache.setData(pool[$0 % 64], forKey: keys[$0]) }
        let gets = try timed(30 * count, perOperation: false) { _ = try cache.data(forKey: keys[$0 % count]) }
        // The same gets from two threads, each reading its half of the keys.
        let total = count
        let seconds = onThreads(2) { thread in
            let half = (total * thread / 2)..<(total * (thread + 1) / 2)
            for _ in 0..<30 { for i in half { _ = try? cache.data(forKey: keys[i]) } }
        }
        let parallelGets = Run(operations: 30 * count, seconds: seconds, latencies: [])
        try cache.close()
        let notes = (0..<count).map(SmallNote.make)
        let objects = try ObjectCache<String, SmallNote>(
            directory: scratch.fresh("packed-profile-notes"), configuration: .init(maxDiskSize: Int.max, memoryLimit: 0)
        )
        let noteSets = try timed(count, perOperation: false) { try objects.set(notes[$0], forKey: keys[$0]) }
        let noteGets = try timed(5 * count, perOperation: false) { _ = try objects.value(forKey: keys[$0 % count]) }
        try objects.close()
        // Memory hits alone: 50 passes over 20,000 ~1 KiB notes in the memory tier.
        let memory = try ObjectCache<String, BenchNote>(
            directory: scratch.fresh("memory-profile"), configuration: .init(maxDiskSize: Int.max, memoryLimit: count))
        let bigNotes = (0..<count).map(BenchNote.make)
        for i in 0..<count { memory.setUnsaved(bigNotes[i], forKey: keys[i]) }
        let hits = try timed(50 * count, perOperation: false) { _ = try memory.value(forKey: keys[$0 % count]) }
        try memory.close()
        return [
            (summarize("profile ObjectCache memory hit", [hits]), nil),
            (summarize("packed profile ObjectCache set note", [noteSets]), nil),
            (summarize("packed profile ObjectCache get note", [noteGets]), nil),
            (summarize("packed profile set 2 × \(valueSize) B", [sets]), nil),
            (summarize("packed profile get 2 × \(valueSize) B", [gets]), nil),
            (summarize("packed profile get 2 × \(valueSize) B, 2 threads", [parallelGets]), nil),
        ]
    }
}
