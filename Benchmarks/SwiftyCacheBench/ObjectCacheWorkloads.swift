import Dispatch
import Foundation
import SwiftyCacheCodable
import SwiftyCacheCore
import Synchronization

/// A realistic note: about 1 KiB of JSON.
struct BenchNote: Codable, Sendable {
    var id: Int
    var title: String
    var tags: [String]
    var created: Date
    var modified: Date
    var isPinned: Bool
    var body: String

    static func make(_ id: Int) -> BenchNote {
        BenchNote(
            id: id, title: "Note number \(id) about storage engines", tags: ["cache", "swift", "linux", "notes"],
            created: Date(timeIntervalSince1970: 1_700_000_000 + Double(id)),
            modified: Date(timeIntervalSince1970: 1_700_100_000 + Double(id)), isPinned: id % 3 == 0,
            body: String(repeating: "The quick brown fox jumps over the lazy dog. ", count: 19))
    }
}

/// ObjectCache through disk, against the work it cannot avoid: encoding or decoding (with the
/// coders the format uses) plus the engine call with the same slots, under the same names.
struct ObjectCacheWorkloads {
    let count: Int
    let rounds: Int
    let scratch: Scratch

    func run() async throws -> [(engine: Figure, floor: Figure?)] {
        let notes = (0..<count).map(BenchNote.make)
        let keys = (0..<count).map { "note-\($0)" }
        var results: [(engine: Figure, floor: Figure?)] = []
        for (label, format, encoder, decoder) in formats() {
            var runs: [String: [Run]] = [:]
            for round in -1..<rounds {
                let cache = try ObjectCache<String, BenchNote>(
                    directory: scratch.fresh("object-\(label)"),
                    configuration: .init(maxDiskSize: Int.max, memoryLimit: 0, format: format))
                // The engine as ObjectCache opens it: packed storage.
                let engine = try DiskLRUCache(
                    directory: scratch.fresh("object-base-\(label)"), appVersion: 1, valueCount: 2, maxSize: Int.max,
                    options: .init(storage: .packed))
                let envelope = Data(repeating: 1, count: 40)
                let engineKeys = keys.map { XXHashKeyHasher().engineKey(for: Data("s:\($0)".utf8)) }
                let (so, sb) = try alternating(
                    count, first: { try cache.set(notes[$0], forKey: keys[$0]) },
                    second: { try engine.setData([envelope, encoder(notes[$0])], forKey: engineKeys[$0]) })
                let (go, gb) = try alternating(
                    count, first: { _ = try cache.value(forKey: keys[$0]) },
                    second: { i in if let slots = try engine.data(forKey: engineKeys[i]) { _ = try decoder(slots[1]) } }
                )
                let asyncGet = try await timedAsync(count) { _ = try await cache.value(forKey: keys[$0]) }
                if round >= 0 {
                    runs["set", default: []].append(so)
                    runs["set base", default: []].append(sb)
                    runs["get", default: []].append(go)
                    runs["get base", default: []].append(gb)
                    runs["async get", default: []].append(asyncGet)
                }
            }
            results.append(
                summarizePair(
                    "object set \(label)", runs["set"] ?? [], baseline: "encode+engine set \(label)",
                    runs["set base"] ?? []))
            results.append(
                summarizePair(
                    "object get \(label)", runs["get"] ?? [], baseline: "engine+decode get \(label)",
                    runs["get base"] ?? []))
            if label == "json" {
                results.append(
                    (
                        summarize("object async get json", runs["async get"] ?? []),
                        summarize("object get json", runs["get"] ?? [])
                    ))
            }
        }

        // Memory hits, write-back save and two concurrent readers, with JSON.
        var memoryRuns: [Run] = []
        var hotRuns: [Run] = []
        var floorRuns: [Run] = []
        var hotFloorRuns: [Run] = []
        var saveRuns: [Run] = []
        var parallelRuns: [Run] = []
        var singleRuns: [Run] = []
        let saved = min(count, 10_000)
        for round in -1..<rounds {  // round -1 warms up and is not recorded
            let cache = try ObjectCache<String, BenchNote>(
                directory: scratch.fresh("object-memory"),
                configuration: .init(maxDiskSize: Int.max, memoryLimit: count + saved))
            for i in 0..<count { try await cache.set(notes[i], forKey: keys[i]) }
            settle()  // the sets' writeback would otherwise overlap the CPU-bound lookups
            let lookups = count * 20
            let count = self.count
            let lookup = { try timed(lookups, perOperation: false) { _ = try cache.value(forKey: keys[$0 % count]) } }
            _ = try lookup()  // warm-up: the first pass also pays for first touches of fresh memory
            let memoryRun = try lookup()
            // The same over a hot set that fits the CPU caches: what a hit costs without the
            // cache misses on 20,000 values' heap storage.
            let hot = min(count, 1_000)
            let hotRun = try timed(lookups, perOperation: false) { _ = try cache.value(forKey: keys[$0 % hot]) }
            // The floor of a memory hit: a dictionary of the same notes under a mutex, each
            // lookup returning a copy (which retains the note's heap-allocated fields), as a
            // hand-written memory cache would, with no LRU order, limits, expiry or counters.
            let dictionary = Mutex([String: BenchNote](uniqueKeysWithValues: (0..<count).map { (keys[$0], notes[$0]) }))
            let floorLookup = { (keyCount: Int) in
                timed(lookups, perOperation: false) { i in keep(dictionary.withLock { $0[keys[i % keyCount]] }) }
            }
            _ = floorLookup(count)  // warm-up, as for the cache
            let floorRun = floorLookup(count)
            let hotFloorRun = floorLookup(hot)
            for i in 0..<saved { cache.setUnsaved(notes[i % count], forKey: "unsaved-\(i)") }
            let saveAll = { try timed(1, perOperation: false) { _ in try cache.save() } }
            let saveRun = try saveAll()

            cache.clearMemory()
            let disk = try ObjectCache<String, BenchNote>(
                directory: scratch.fresh("object-readers"), configuration: .init(maxDiskSize: Int.max, memoryLimit: 0))
            for i in 0..<count { try await disk.set(notes[i], forKey: keys[i]) }
            let readAll = { try timed(count, perOperation: false) { _ = try disk.value(forKey: keys[$0]) } }
            let singleRun = try readAll()
            let start = nanoseconds()
            DispatchQueue.concurrentPerform(iterations: 2) { reader in
                for i in stride(from: reader, to: count, by: 2) { _ = try? disk.value(forKey: keys[i]) }
            }
            let parallelRun = Run(operations: count, seconds: Double(nanoseconds() - start) / 1e9, latencies: [])
            guard round >= 0 else { continue }
            memoryRuns.append(memoryRun)
            hotRuns.append(hotRun)
            floorRuns.append(floorRun)
            hotFloorRuns.append(hotFloorRun)
            saveRuns.append(saveRun)
            singleRuns.append(singleRun)
            parallelRuns.append(parallelRun)
        }
        results.append(
            (summarize("object memory hit", memoryRuns), summarize("locked dictionary lookup (floor)", floorRuns)))
        results.append(
            (
                summarize("object memory hit, 1,000 hot keys", hotRuns),
                summarize("locked dictionary lookup, hot (floor)", hotFloorRuns)
            ))
        // Naming keys: SHA-256 (earlier releases' directories) against xxHash (new caches).
        let keyBytes = keys.map { Data("s:\($0)".utf8) }
        var hashRuns: (sha: [Run], xx: [Run]) = ([], [])
        for round in -1..<rounds {
            let sha = timed(count * 10, perOperation: false) { keep(SHA256.hexDigest(keyBytes[$0 % count])) }
            let xx = timed(count * 10, perOperation: false) {
                keep(XXHashKeyHasher().engineKey(for: keyBytes[$0 % count]))
            }
            guard round >= 0 else { continue }
            hashRuns.sha.append(sha)
            hashRuns.xx.append(xx)
        }
        results.append(
            (
                summarize("key naming, xxHash (new caches)", hashRuns.xx),
                summarize("key naming, SHA-256 (earlier releases)", hashRuns.sha)
            ))
        results.append((summarize("object save() of \(saved) unsaved", saveRuns), nil))
        results.append(
            (summarize("object get, 2 readers", parallelRuns), summarize("object get, 1 reader", singleRuns)))
        return results
    }

    private func formats() -> [(String, ObjectCacheFormat, (BenchNote) throws -> Data, (Data) throws -> BenchNote)] {
        // The coders ObjectCache uses for each format: the built-in ones for JSON.
        let jsonEncoder = DirectJSONEncoder()
        let jsonDecoder = DirectJSONDecoder()
        let plistEncoder = PropertyListEncoder()
        plistEncoder.outputFormat = .binary
        let plistDecoder = PropertyListDecoder()
        return [
            ("json", .json, { try jsonEncoder.encode($0) }, { try jsonDecoder.decode(BenchNote.self, from: $0) }),
            (
                "binary plist", .propertyList(.binary), { try plistEncoder.encode($0) },
                { try plistDecoder.decode(BenchNote.self, from: $0) }
            ),
        ]
    }

    private func timedAsync(_ count: Int, _ body: (Int) async throws -> Void) async rethrows -> Run {
        var latencies: [Double] = []
        latencies.reserveCapacity(count)
        let start = nanoseconds()
        for i in 0..<count {
            let before = nanoseconds()
            try await body(i)
            latencies.append(Double(nanoseconds() - before))
        }
        return Run(operations: count, seconds: Double(nanoseconds() - start) / 1e9, latencies: latencies)
    }
}
