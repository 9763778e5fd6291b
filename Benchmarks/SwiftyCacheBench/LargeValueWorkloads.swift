import Foundation
import SwiftyCacheCore

/// Values above the inline limit: packed storage keeps them as files, as file storage does,
/// so the two should cost the same. 2 slots of 64 KiB, files and packed interleaved. With
/// `inlineLimit` above `valueSize` (the crossover workload), packed keeps them in records
/// instead: where that stops paying is where the default inline limit belongs.
struct LargeValueWorkloads {
    let count: Int
    let rounds: Int
    let scratch: Scratch
    var valueSize = 64 << 10
    var inlineLimit = DiskLRUCache.Storage.defaultInlineLimit

    func run() throws -> [(engine: Figure, floor: Figure?)] {
        var generator = SeededGenerator(seed: 17)
        let pool = (0..<8).map { _ in
            [randomData(valueSize, using: &generator), randomData(valueSize, using: &generator)]
        }
        let keys = (0..<count).map { "large-\($0)" }
        var runs: [String: [[Run]]] = [:]
        for round in -1..<rounds {
            let files = try DiskLRUCache(
                directory: scratch.fresh("large-files"), appVersion: 1, valueCount: 2, maxSize: Int.max)
            let packed = try DiskLRUCache(
                directory: scratch.fresh("large-packed"), appVersion: 1, valueCount: 2, maxSize: Int.max,
                options: .init(storage: .packed(inlineLimit: inlineLimit)))
            var results: [(String, [Run])] = []
            results.append(
                (
                    "set",
                    try interleaved(
                        count,
                        [
                            { try files.setData(pool[$0 % 8], forKey: keys[$0]) },
                            { try packed.setData(pool[$0 % 8], forKey: keys[$0]) },
                        ])
                ))
            results.append(
                (
                    "get",
                    try interleaved(
                        count, [{ _ = try files.data(forKey: keys[$0]) }, { _ = try packed.data(forKey: keys[$0]) }])
                ))
            results.append(
                (
                    "remove",
                    try interleaved(
                        count,
                        [
                            { _ = try files.removeValue(forKey: keys[$0]) },
                            { _ = try packed.removeValue(forKey: keys[$0]) },
                        ])
                ))
            try files.close()
            try packed.close()
            guard round >= 0 else { continue }
            for (name, pair) in results { runs[name, default: []].append(pair) }
        }
        return ["set", "get", "remove"].compactMap { name in
            guard let rounds = runs[name] else { return nil }
            let mode = inlineLimit >= valueSize ? "inline" : "as files"
            return summarizePair(
                "packed (\(mode)) vs files \(name) 2 × \(valueSize >> 10) KiB", rounds.map { $0[1] }, baseline: "files",
                rounds.map { $0[0] })
        }
    }
}
