import Foundation
import SwiftyCacheCodable

/// The JSON coders alone (`--workload coder`): the built-in `DirectJSONEncoder` and
/// `DirectJSONDecoder` against Foundation's `JSONEncoder` and `JSONDecoder`, on the ~320-byte
/// small note and the ~1 KiB note, alternated in one run.
struct CoderWorkload {
    let count: Int
    let rounds: Int

    func run() throws -> [(engine: Figure, floor: Figure?)] {
        try measure("small note", (0..<count).map(SmallNote.make))
            + measure("note", (0..<count).map(BenchNote.make))
    }

    private func measure<T: Codable>(_ label: String, _ values: [T]) throws -> [(engine: Figure, floor: Figure?)] {
        let foundationEncoder = JSONEncoder()
        let foundationDecoder = JSONDecoder()
        let encoder = DirectJSONEncoder()
        let decoder = DirectJSONDecoder()
        let encoded = try values.map { try foundationEncoder.encode($0) }
        let passes = 5
        let operations = passes * values.count
        var runs: [String: [Run]] = [:]
        for round in -1..<rounds {
            let (encodeDirect, encodeFoundation) = try alternating(
                operations, first: { keep(try encoder.encode(values[$0 % values.count])) },
                second: { keep(try foundationEncoder.encode(values[$0 % values.count])) })
            let (decodeDirect, decodeFoundation) = try alternating(
                operations, first: { keep(try decoder.decode(T.self, from: encoded[$0 % values.count])) },
                second: { keep(try foundationDecoder.decode(T.self, from: encoded[$0 % values.count])) })
            guard round >= 0 else { continue }
            runs["encode", default: []].append(encodeDirect)
            runs["encode foundation", default: []].append(encodeFoundation)
            runs["decode", default: []].append(decodeDirect)
            runs["decode foundation", default: []].append(decodeFoundation)
        }
        let bytes = encoded.first?.count ?? 0
        return [
            summarizePair(
                "DirectJSONEncoder \(label) (\(bytes) B)", runs["encode"] ?? [],
                baseline: "JSONEncoder \(label)", runs["encode foundation"] ?? []),
            summarizePair(
                "DirectJSONDecoder \(label) (\(bytes) B)", runs["decode"] ?? [],
                baseline: "JSONDecoder \(label)", runs["decode foundation"] ?? []),
        ]
    }
}
