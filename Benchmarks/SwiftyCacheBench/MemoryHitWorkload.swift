import Foundation
import SwiftyCacheCodable
import Synchronization

/// Memory hits as an app makes them (`--workload memory-hits`): 20,000 small notes that each
/// own their storage (their own title, tags and body on the heap), every value read and then
/// used (its id and title compared), on one thread and on two threads reading distinct halves of
/// the keys; against the floor of a plain `Dictionary` lookup of the same notes, used the same
/// way, with no lock, limits or counters. And what the memory tier costs a read it misses: a
/// disk get through a tier of 100 values against the same get through a tier that keeps nothing.
struct MemoryHitWorkload {
    let count: Int
    let rounds: Int
    let scratch: Scratch

    /// A note with storage of its own: distinct strings and arrays.
    static func ownedNote(_ id: Int) -> SmallNote {
        SmallNote(
            id: id, title: "Note number \(id) about storage", tags: ["cache \(id)", "swift \(id)"],
            modified: Date(timeIntervalSince1970: 1_700_000_000 + Double(id)),
            body: String(repeating: "The quick brown fox jumps over the lazy dog. ", count: 5) + "\(id)")
    }

    func run() throws -> [(engine: Figure, floor: Figure?)] {
        let notes = (0..<count).map(Self.ownedNote)
        let titles = notes.map { $0.title.utf8.count }
        let keys = (0..<count).map { "note-\($0)" }
        let passes = 20
        let cache = try ObjectCache<String, SmallNote>(
            directory: scratch.fresh("memory-hits"), configuration: .init(maxDiskSize: Int.max, memoryLimit: count))
        for i in 0..<count { try cache.set(notes[i], forKey: keys[i]) }
        let dictionary = Dictionary(uniqueKeysWithValues: (0..<count).map { (keys[$0], notes[$0]) })
        let total = count
        // An app's use of a value: it reads fields of it.
        let hitLoop: @Sendable (Range<Int>) -> Void = { range in
            var used = 0
            for _ in 0..<passes {
                for i in range {
                    if let note = try? cache.value(forKey: keys[i]), note.id == i, note.title.utf8.count == titles[i] {
                        used += 1
                    }
                }
            }
            keep(used)
        }
        let floorLoop: @Sendable (Range<Int>) -> Void = { range in
            var used = 0
            for _ in 0..<passes {
                for i in range {
                    if let note = dictionary[keys[i]], note.id == i, note.title.utf8.count == titles[i] { used += 1 }
                }
            }
            keep(used)
        }
        var runs: [String: [Run]] = [:]
        for round in -1..<rounds {
            let operations = passes * total
            let one = onThreads(1) { _ in hitLoop(0..<total) }
            let two = onThreads(2) { thread in hitLoop((total * thread / 2)..<(total * (thread + 1) / 2)) }
            let floorOne = onThreads(1) { _ in floorLoop(0..<total) }
            let floorTwo = onThreads(2) { thread in floorLoop((total * thread / 2)..<(total * (thread + 1) / 2)) }
            guard round >= 0 else { continue }
            runs["one", default: []].append(Run(operations: operations, seconds: one, latencies: []))
            runs["two", default: []].append(Run(operations: operations, seconds: two, latencies: []))
            runs["floor one", default: []].append(Run(operations: operations, seconds: floorOne, latencies: []))
            runs["floor two", default: []].append(Run(operations: operations, seconds: floorTwo, latencies: []))
        }
        try cache.close()
        return [
            (
                summarize("memory hit, owned notes, used, 1 thread", runs["one"] ?? []),
                summarize("Dictionary lookup, owned notes, used, 1 thread (floor)", runs["floor one"] ?? [])
            ),
            (
                summarize("memory hit, owned notes, used, 2 threads", runs["two"] ?? []),
                summarize("memory hit, owned notes, used, 1 thread", runs["one"] ?? [])
            ),
            (
                summarize("Dictionary lookup, owned notes, used, 2 threads (floor)", runs["floor two"] ?? []),
                summarize("Dictionary lookup, owned notes, used, 1 thread (floor)", runs["floor one"] ?? [])
            ),
        ] + (try missCost(notes: notes, keys: keys))
    }

    /// A disk get through a tier of 100 values (a miss: the working set is `count` notes) against
    /// one through a tier that keeps nothing, interleaved in the same rounds.
    private func missCost(notes: [SmallNote], keys: [String]) throws -> [(engine: Figure, floor: Figure?)] {
        var runs: (tier: [Run], none: [Run]) = ([], [])
        for round in -1..<rounds {
            let tiered = try ObjectCache<String, SmallNote>(
                directory: scratch.fresh("miss-tier"), configuration: .init(maxDiskSize: Int.max, memoryLimit: 100))
            let untiered = try ObjectCache<String, SmallNote>(
                directory: scratch.fresh("miss-none"), configuration: .init(maxDiskSize: Int.max, memoryLimit: 0))
            for i in 0..<count {
                try tiered.set(notes[i], forKey: keys[i])
                try untiered.set(notes[i], forKey: keys[i])
            }
            tiered.clearMemory()
            // Keys in a stride that never repeats within 100 reads: every read misses the tier.
            let order = (0..<count).map { ($0 * 7_919) % count }
            let (withTier, without) = try alternating(
                count, first: { keep(try tiered.value(forKey: keys[order[$0]])) },
                second: { keep(try untiered.value(forKey: keys[order[$0]])) })
            try tiered.close()
            try untiered.close()
            guard round >= 0 else { continue }
            runs.tier.append(withTier)
            runs.none.append(without)
        }
        return [
            summarizePair(
                "get missing a 100-value memory tier", runs.tier, baseline: "get with no memory tier", runs.none)
        ]
    }
}
