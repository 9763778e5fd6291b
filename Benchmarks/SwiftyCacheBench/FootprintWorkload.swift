import Foundation
import SwiftyCacheCodable
import SwiftyCacheCore

/// `--workload footprint`: the disk a packed `ObjectCache` takes against its `maxDiskSize` under
/// steady churn, the typed notes of the typed-path rows (`SmallNote`) over ten times as many keys
/// as fit, one set to three gets at random. Per size (`--footprint-sizes`, in MiB; default 1, 8
/// and 64): the directory's allocated bytes (`st_blocks`, every file in it) over `maxDiskSize`,
/// sampled every 250 operations once the cache has been filled twice over: the peak and the
/// mean; the live size over `maxDiskSize` at the end; and, as the floor, the allocated bytes
/// after `compact()` (no garbage, the journal rebuilt) over `maxDiskSize`.
struct FootprintWorkload {
    let sizes: [Int]
    let scratch: Scratch

    /// The bytes a note takes in the cache, about: its JSON, envelope and record.
    static let entryEstimate = 420

    func run() throws -> [(String, Double)] {
        var derived: [(String, Double)] = []
        for size in sizes {
            let directory = scratch.fresh("footprint-\(size)")
            let cache = try ObjectCache<String, SmallNote>(
                directory: directory, configuration: ObjectCacheConfiguration(maxDiskSize: size))
            let capacity = max(size / Self.entryEstimate, 16)
            let keys = 10 * capacity
            // Sets enough to replace the whole cache eight times; the first two fill it.
            let operations = 4 * 8 * capacity
            let warm = 4 * 2 * capacity
            var generator = SeededGenerator(seed: 17)
            var peak = 0.0
            var sum = 0.0
            var samples = 0
            let path = directory.path(percentEncoded: false)
            var sampling: UInt64 = 0
            let start = nanoseconds()
            for operation in 0..<operations {
                let key = Int(generator.next() % UInt64(keys))
                if operation % 4 == 0 {
                    try cache.set(SmallNote.make(key), forKey: "note-\(key)")
                } else {
                    keep(try cache.value(forKey: "note-\(key)"))
                }
                if operation >= warm && operation % 250 == 0 {
                    let sampleStart = nanoseconds()
                    defer { sampling += nanoseconds() - sampleStart }
                    let ratio = Double(allocatedBytes(atPath: path)) / Double(size)
                    peak = max(peak, ratio)
                    sum += ratio
                    samples += 1
                }
            }
            let seconds = Double(nanoseconds() - start - sampling) / 1e9
            let live = Double(cache.diskSize) / Double(size)
            // The floor: no garbage in the segments, the journal rebuilt, only what the live
            // entries need (their records, the journal's line for each, the space reserve).
            try cache.disk.compact()
            let floor = Double(allocatedBytes(atPath: path)) / Double(size)
            try cache.close()
            let name = "footprint \(size >> 20) MiB"
            derived.append(("\(name): peak allocated over maxDiskSize", peak))
            derived.append(("\(name): mean allocated over maxDiskSize", samples > 0 ? sum / Double(samples) : 0))
            derived.append(("\(name): live over maxDiskSize at the end", live))
            derived.append(("\(name): operations per second (a set to three gets)", Double(operations) / seconds))
            derived.append(("\(name): floor: allocated after compact() over maxDiskSize", floor))
            try? FileManager.default.removeItem(at: directory)
        }
        return derived
    }
}
