import Foundation
import SwiftyCacheCodable
import SwiftyCacheCore

/// A small note, about 320 bytes of JSON: the typical value of an app's model layer.
struct SmallNote: Codable, Sendable {
    var id: Int
    var title: String
    var tags: [String]
    var modified: Date
    var body: String

    static func make(_ id: Int) -> SmallNote {
        SmallNote(
            id: id, title: "Note \(id)", tags: ["cache", "swift"], modified: Date(timeIntervalSince1970: 1_700_000_000),
            body: String(repeating: "The quick brown fox jumps over the lazy dog. ", count: 5))
    }
}

/// The engine (file storage) against SQLite used as a model layer would use it, operation by
/// operation in the same rounds, 2 slots per entry; and `ObjectCache` of small notes against
/// `JSONEncoder` + SQLite one-blob rows. SQLite is loaded at run time; without it, one line
/// says so and nothing else runs.
struct SQLiteWorkloads {
    let count: Int
    let rounds: Int
    let scratch: Scratch

    /// Rows, and derived figures: allocated disk per value byte for each contender.
    func run() throws -> (rows: [(engine: Figure, floor: Figure?)], derived: [(String, Double)]) {
        guard SQLiteStore.isAvailable else {
            print("sqlite: libsqlite3 was not found; the SQLite baseline rows are skipped")
            return ([], [])
        }
        var rows: [(engine: Figure, floor: Figure?)] = []
        var derived: [(String, Double)] = []
        for size in [128, 1024] {
            let (sizeRows, sizeDerived) = try slotWorkloads(valueSize: size)
            rows += sizeRows
            derived += sizeDerived
        }
        let (noteRows, noteDerived) = try noteWorkloads()
        return (rows + noteRows, derived + noteDerived)
    }

    private func slotWorkloads(valueSize: Int) throws -> ([(engine: Figure, floor: Figure?)], [(String, Double)]) {
        var generator = SeededGenerator(seed: 11)
        let pool = (0..<64).map { _ in
            [randomData(valueSize, using: &generator), randomData(valueSize, using: &generator)]
        }
        let keys = (0..<count).map { "key-\($0)" }
        var order = Array(0..<count)
        order.shuffle(using: &generator)
        var engine: [String: [Run]] = [:]
        var sqlite: [String: [Run]] = [:]
        var diskRatios: (engine: [Double], sqlite: [Double]) = ([], [])
        for round in -1..<rounds {
            let directory = scratch.fresh("vs-sqlite-\(valueSize)")
            var cache = try DiskLRUCache(directory: directory, appVersion: 1, valueCount: 2, maxSize: Int.max)
            let databasePath = scratch.fresh("sqlite-\(valueSize)").path(percentEncoded: false)
            try FileManager.default.createDirectory(atPath: databasePath, withIntermediateDirectories: true)
            guard var database = SQLiteStore(path: databasePath + "/kv.sqlite", slots: 2) else {
                print("sqlite: the database could not be opened; the SQLite baseline rows are skipped")
                return ([], [])
            }
            var results: [(String, Run, Run)] = []
            let (se, ss) = try alternating(
                count, first: { try cache.setData(pool[$0 % 64], forKey: keys[$0]) },
                second: { database.set(keys[$0], pool[$0 % 64]) })
            results.append(("set", se, ss))
            try cache.flush()
            database.checkpoint()
            let valueBytes = Double(count * 2 * valueSize)
            diskRatios.engine.append(Double(allocatedBytes(atPath: directory.path(percentEncoded: false))) / valueBytes)
            diskRatios.sqlite.append(Double(allocatedBytes(atPath: databasePath)) / valueBytes)
            let (ge, gs) = try alternating(
                count, first: { _ = try cache.data(forKey: keys[order[$0]]) },
                second: { _ = database.get(keys[order[$0]], slots: 2) })
            results.append(("get", ge, gs))
            try cache.close()
            // Reopen and a first read, one of each, alternating over the rounds.
            let reopenEngine = try timed(1, perOperation: false) { _ in
                cache = try DiskLRUCache(directory: directory, appVersion: 1, valueCount: 2, maxSize: Int.max)
                _ = try cache.data(forKey: keys[0])
            }
            let reopenSQLite = timed(1, perOperation: false) { _ in
                database = SQLiteStore(path: databasePath + "/kv.sqlite", slots: 2) ?? database
                _ = database.get(keys[0], slots: 2)
            }
            let (re, rs) = try alternating(
                count, first: { _ = try cache.remove(keys[order[$0]]) },
                second: { database.remove(keys[order[$0]]) })
            results.append(("remove", re, rs))
            try cache.close()

            // Churn: 4N new keys with room for a quarter of them: eviction against delete-oldest.
            let churnCache = try DiskLRUCache(
                directory: scratch.fresh("vs-sqlite-churn-\(valueSize)"), appVersion: 1, valueCount: 2,
                maxSize: count * 2 * valueSize)
            let churnPath = scratch.fresh("sqlite-churn-\(valueSize)").path(percentEncoded: false)
            try FileManager.default.createDirectory(atPath: churnPath, withIntermediateDirectories: true)
            guard let churnDatabase = SQLiteStore(path: churnPath + "/kv.sqlite", slots: 2) else { return ([], []) }
            let (ce, cs) = try alternatingChurn(
                count: count, pool: pool, cache: churnCache, set: churnDatabase.set, remove: churnDatabase.remove)
            results.append(("churn", ce, cs))
            try churnCache.close()
            guard round >= 0 else { continue }
            for (name, e, s) in results {
                engine[name, default: []].append(e)
                sqlite[name, default: []].append(s)
            }
            engine["reopen", default: []].append(reopenEngine)
            sqlite["reopen", default: []].append(reopenSQLite)
        }
        let label = "2 × \(valueSize >= 1024 ? "\(valueSize / 1024) KiB" : "\(valueSize) B")"
        var rows: [(engine: Figure, floor: Figure?)] = []
        for name in ["set", "get", "remove", "churn"] {
            guard let runs = engine[name], let baseline = sqlite[name] else { continue }
            let (figure, base) = summarizePair(
                "files vs sqlite \(name) \(label)", runs, baseline: "sqlite \(name) \(label)", baseline)
            rows.append((figure, base))
        }
        if let runs = engine["reopen"], let baseline = sqlite["reopen"] {
            rows.append(
                (
                    summarize("files reopen \(label)", runs),
                    summarize("sqlite reopen \(label)", baseline)
                ))
        }
        let median = { (values: [Double]) in values.sorted()[values.count / 2] }
        let derived = [
            ("allocated disk per value byte, files \(label)", median(diskRatios.engine)),
            ("allocated disk per value byte, sqlite \(label)", median(diskRatios.sqlite)),
        ]
        return (rows, derived)
    }

    private func noteWorkloads() throws -> ([(engine: Figure, floor: Figure?)], [(String, Double)]) {
        let notes = (0..<count).map(SmallNote.make)
        let keys = (0..<count).map { "note-\($0)" }
        let encoder = JSONEncoder()
        let decoder = JSONDecoder()
        let encodedBytes = Double(try notes.reduce(0) { $0 + (try encoder.encode($1)).count })
        var runs: [String: [Run]] = [:]
        var diskRatios: (cache: [Double], sqlite: [Double]) = ([], [])
        for round in -1..<rounds {
            let directory = scratch.fresh("vs-sqlite-notes")
            let cache = try ObjectCache<String, SmallNote>(directory: directory, maxDiskSize: Int.max, memoryLimit: 0)
            let databasePath = scratch.fresh("sqlite-notes").path(percentEncoded: false)
            try FileManager.default.createDirectory(atPath: databasePath, withIntermediateDirectories: true)
            guard let database = SQLiteStore(path: databasePath + "/kv.sqlite", slots: 1) else { return ([], []) }
            let (so, ss) = try alternating(
                count, first: { try cache.set(notes[$0], forKey: keys[$0]) },
                second: { database.set(keys[$0], [try encoder.encode(notes[$0])]) })
            database.checkpoint()
            diskRatios.cache.append(
                Double(allocatedBytes(atPath: directory.path(percentEncoded: false))) / encodedBytes)
            diskRatios.sqlite.append(Double(allocatedBytes(atPath: databasePath)) / encodedBytes)
            let (go, gs) = try alternating(
                count, first: { _ = try cache.value(forKey: keys[$0]) },
                second: { i in
                    var decoded = 0
                    database.forEachBlob(keys[i]) { blob in
                        if (try? decoder.decode(SmallNote.self, from: blob)) != nil { decoded += 1 }
                    }
                })
            try cache.close()
            guard round >= 0 else { continue }
            runs["set", default: []].append(so)
            runs["set base", default: []].append(ss)
            runs["get", default: []].append(go)
            runs["get base", default: []].append(gs)
        }
        var rows: [(engine: Figure, floor: Figure?)] = []
        for name in ["set", "get"] {
            guard let object = runs[name], let base = runs["\(name) base"] else { continue }
            let (figure, baseline) = summarizePair(
                "ObjectCache files vs sqlite \(name) note", object, baseline: "JSONEncoder + sqlite \(name) note", base)
            rows.append((figure, baseline))
        }
        let median = { (values: [Double]) in values.sorted()[values.count / 2] }
        return (
            rows,
            [
                ("allocated disk per encoded byte, ObjectCache files, small notes", median(diskRatios.cache)),
                ("allocated disk per encoded byte, sqlite, small notes", median(diskRatios.sqlite)),
            ]
        )
    }
}
