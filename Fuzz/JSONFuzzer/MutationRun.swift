import Foundation
import SwiftyCacheCodable
import SwiftyCacheTestSupport

#if canImport(Glibc)
import Glibc
#endif

/// Hostile inputs without libFuzzer: seeds (valid documents of every shape, and a few built
/// to hurt) mutated at random, each run through `checkJSON`. Prints what it did, how fast, and
/// the process's peak memory.
struct MutationRun {
    let cases: Int
    let seed: UInt64

    func run() {
        var random = SplitMix(state: seed)
        let seeds = Self.seeds()
        var accepted = 0
        let start = Date()
        for index in 0..<cases {
            var bytes = seeds[Int(random.next() % UInt64(seeds.count))]
            for _ in 0..<(1 + Int(random.next() % 4)) { mutate(&bytes, &random) }
            if checkJSON(Data(bytes)) == .accepted { accepted += 1 }
            if index > 0, index % 200_000 == 0 { print("\(index) cases…") }
        }
        let seconds = Date().timeIntervalSince(start)
        print(
            String(
                format: "%d cases in %.1f s (%.0f a second): %d accepted, %d refused; peak RSS %.1f MiB", cases,
                seconds, Double(cases) / seconds, accepted, cases - accepted, peakRSSMegabytes()))
    }

    /// One random change: a byte flipped, inserted or removed, a slice repeated or cut, a run
    /// of brackets, a structural character, a number at a limit.
    private func mutate(_ bytes: inout [UInt8], _ random: inout SplitMix) {
        let position = bytes.isEmpty ? 0 : Int(random.next() % UInt64(bytes.count))
        switch random.next() % 8 {
        case 0 where !bytes.isEmpty: bytes[position] ^= UInt8(truncatingIfNeeded: 1 << (random.next() % 8))
        case 1: bytes.insert(UInt8(truncatingIfNeeded: random.next()), at: position)
        case 2 where !bytes.isEmpty: bytes.remove(at: position)
        case 3 where !bytes.isEmpty:
            let end = min(bytes.count, position + 1 + Int(random.next() % 32))
            bytes.insert(contentsOf: bytes[position..<end], at: position)
        case 4: bytes.removeSubrange(position...)
        case 5:
            let run = Int(random.next() % 1_000)
            bytes.insert(contentsOf: repeatElement(random.next() % 2 == 0 ? 0x5B : 0x7B, count: run), at: position)
        case 6:
            let pieces = ["{", "}", "[", "]", ",", ":", "\"", "\\", "\\u", "\\uD800", "null", "-", "e", "."]
            bytes.insert(contentsOf: pieces[Int(random.next() % UInt64(pieces.count))].utf8, at: position)
        default:
            let numbers = ["1e400", "-0", "18446744073709551616", "9223372036854775808", "1e-400", "0.1e1", "-1"]
            bytes.insert(contentsOf: numbers[Int(random.next() % UInt64(numbers.count))].utf8, at: position)
        }
    }

    private static func seeds() -> [[UInt8]] {
        let note = FuzzNote(
            id: 7, title: "Groceries \"today\" — ünïcödé 🎉", tags: ["home", "a\\b", "/"],
            created: Date(timeIntervalSince1970: 1_700_000_000), rating: 4.5, flags: ["done": false],
            payload: Data([0, 1, 2, 250]))
        let documents: [String] = [
            #"{"a":1,"b":[true,false,null],"c":{"d":"e\n\u00e9\ud83d\ude00"}}"#,
            #"[1,-2.5e-3,1e21,0,-0,123456789012345678,"x"]"#,
            #"{"k0":0,"k1":1,"k2":2,"k3":3,"k4":4,"k5":5,"k6":6,"k7":7,"k8":8,"k9":9,"k10":10,"k11":11,"k12":12,"k13":13,"k14":14,"k15":15,"k16":16,"k17":17}"#,
            "\"\"", "[]", "{}", "[[[[[[[[[[]]]]]]]]]]",
        ]
        var seeds = documents.map { Array($0.utf8) }
        if let encoded = try? DirectJSONEncoder().encode(note) { seeds.append(Array(encoded)) }
        if let encoded = try? JSONEncoder().encode([note, note]) { seeds.append(Array(encoded)) }
        return seeds
    }
}

/// The process's peak resident memory.
func peakRSSMegabytes() -> Double {
    var usage = rusage()
    getrusage(RUSAGE_SELF.rawValue, &usage)
    return Double(usage.ru_maxrss) / 1024
}
