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

    /// The four contenders of one round, opened in fresh directories.
    private struct Contenders {
        var files: DiskLRUCache
        var packed: DiskLRUCache
        var floor: PackedFloor
        var database: SQLiteStore
        var filesDirectory: URL
        var packedDirectory: URL
        var databasePath: String
    }

    private func openContenders(_ name: String, maxSize: Int) throws -> Contenders? {
        let filesDirectory = scratch.fresh("files-\(name)")
        let packedDirectory = scratch.fresh("packed-\(name)")
        let databasePath = scratch.fresh("sqlite-\(name)").path(percentEncoded: false)
        try FileManager.default.createDirectory(atPath: databasePath, withIntermediateDirectories: true)
        guard let database = SQLiteStore(path: databasePath + "/kv.sqlite", slots: 2) else {
            print("sqlite: the database could not be opened; the SQLite baseline rows are skipped")
            return nil
        }
        return Contenders(
            files: try DiskLRUCache(directory: filesDirectory, appVersion: 1, valueCount: 2, maxSize: maxSize),
            packed: try DiskLRUCache(
                directory: packedDirectory, appVersion: 1, valueCount: 2, maxSize: maxSize,
                options: .init(storage: .packed)),
            floor: PackedFloor(directory: scratch.fresh("packed-floor-\(name)")), database: database,
            filesDirectory: filesDirectory, packedDirectory: packedDirectory, databasePath: databasePath)
    }

    /// Files, packed, the packed floor and SQLite, operation by operation in the same rounds,
    /// 2 slots of `valueSize` bytes per entry.
    private func slotWorkloads(valueSize: Int) throws -> ([(engine: Figure, floor: Figure?)], [(String, Double)]) {
        var generator = SeededGenerator(seed: 11)
        let pool = (0..<64).map { _ in
            [randomData(valueSize, using: &generator), randomData(valueSize, using: &generator)]
        }
        let keys = (0..<count).map { "key-\($0)" }
        var order = Array(0..<count)
        order.shuffle(using: &generator)
        let names = ["files", "packed", "packed floor", "sqlite"]
        var runs: [String: [[Run]]] = [:]  // operation → rounds → one run per contender
        var disk: [String: [Double]] = [:]
        var reopens: (files: [Run], packed: [Run], sqlite: [Run]) = ([], [], [])
        let label = "2 × \(valueSize >= 1024 ? "\(valueSize / 1024) KiB" : "\(valueSize) B")"
        for round in -1..<rounds {
            guard var c = try openContenders("\(valueSize)", maxSize: Int.max) else { return ([], []) }
            var results: [(String, [Run])] = []
            results.append(
                (
                    "set",
                    try interleaved(
                        count,
                        [
                            { try c.files.setData(pool[$0 % 64], forKey: keys[$0]) },
                            { try c.packed.setData(pool[$0 % 64], forKey: keys[$0]) },
                            { c.floor.set(keys[$0], pool[$0 % 64]) },
                            { c.database.set(keys[$0], pool[$0 % 64]) },
                        ])
                ))
            try c.files.flush()
            try c.packed.flush()
            try c.packed.compact()
            c.database.checkpoint()
            let valueBytes = Double(count * 2 * valueSize)
            disk["files", default: []].append(
                Double(allocatedBytes(atPath: c.filesDirectory.path(percentEncoded: false))) / valueBytes)
            disk["packed", default: []].append(
                Double(allocatedBytes(atPath: c.packedDirectory.path(percentEncoded: false))) / valueBytes)
            disk["sqlite", default: []].append(Double(allocatedBytes(atPath: c.databasePath)) / valueBytes)
            results.append(
                (
                    "get",
                    try interleaved(
                        count,
                        [
                            { _ = try c.files.data(forKey: keys[order[$0]]) },
                            { _ = try c.packed.data(forKey: keys[order[$0]]) },
                            { _ = c.floor.get(keys[order[$0]]) },
                            { _ = c.database.get(keys[order[$0]], slots: 2) },
                        ])
                ))
            try c.files.close()
            try c.packed.close()
            // Reopen and a first read, one of each, alternating over the rounds.
            let reopenFiles = try timed(1, perOperation: false) { _ in
                c.files = try DiskLRUCache(directory: c.filesDirectory, appVersion: 1, valueCount: 2, maxSize: Int.max)
                _ = try c.files.data(forKey: keys[0])
            }
            let reopenPacked = try timed(1, perOperation: false) { _ in
                c.packed = try DiskLRUCache(
                    directory: c.packedDirectory, appVersion: 1, valueCount: 2, maxSize: Int.max,
                    options: .init(storage: .packed))
                _ = try c.packed.data(forKey: keys[0])
            }
            let reopenSQLite = timed(1, perOperation: false) { _ in
                c.database = SQLiteStore(path: c.databasePath + "/kv.sqlite", slots: 2) ?? c.database
                _ = c.database.get(keys[0], slots: 2)
            }
            results.append(
                (
                    "remove",
                    try interleaved(
                        count,
                        [
                            { _ = try c.files.removeValue(forKey: keys[order[$0]]) },
                            { _ = try c.packed.removeValue(forKey: keys[order[$0]]) },
                            { c.floor.remove(keys[order[$0]]) },
                            { c.database.remove(keys[order[$0]]) },
                        ])
                ))
            try c.files.close()
            try c.packed.close()

            // Churn: 4N new keys with room for a quarter of them: eviction against delete-oldest.
            guard let churn = try openContenders("churn-\(valueSize)", maxSize: count * 2 * valueSize) else {
                return ([], [])
            }
            results.append(
                (
                    "churn",
                    try interleaved(
                        4 * count,
                        [
                            { try churn.files.setData(pool[$0 % 64], forKey: "churn-\($0)") },
                            { try churn.packed.setData(pool[$0 % 64], forKey: "churn-\($0)") },
                            { i in
                                churn.floor.set("churn-\(i)", pool[i % 64])
                                if i >= count { churn.floor.remove("churn-\(i - count)") }
                            },
                            { i in
                                churn.database.set("churn-\(i)", pool[i % 64])
                                if i >= count { churn.database.remove("churn-\(i - count)") }
                            },
                        ])
                ))
            churn.packed.waitForBackgroundWork()
            disk["packed churn", default: []].append(
                Double(allocatedBytes(atPath: churn.packedDirectory.path(percentEncoded: false)))
                    / Double(count * 2 * valueSize))
            try churn.files.close()
            try churn.packed.close()
            guard round >= 0 else { continue }
            for (name, contenderRuns) in results { runs[name, default: []].append(contenderRuns) }
            reopens.files.append(reopenFiles)
            reopens.packed.append(reopenPacked)
            reopens.sqlite.append(reopenSQLite)
        }
        var rows: [(engine: Figure, floor: Figure?)] = []
        for name in ["set", "get", "remove", "churn"] {
            guard let rounds = runs[name] else { continue }
            let byContender = names.indices.map { index in rounds.map { $0[index] } }
            let sqlite = byContender[3]
            rows.append(summarizePair("files vs sqlite \(name) \(label)", byContender[0], baseline: "sqlite", sqlite))
            rows.append(summarizePair("packed vs sqlite \(name) \(label)", byContender[1], baseline: "sqlite", sqlite))
            if name != "churn" {
                rows.append(
                    summarizePair(
                        "packed vs floor \(name) \(label)", byContender[1], baseline: "packed floor", byContender[2]))
            }
        }
        rows.append((summarize("files reopen \(label)", reopens.files), summarize("sqlite reopen", reopens.sqlite)))
        rows.append((summarize("packed reopen \(label)", reopens.packed), summarize("sqlite reopen", reopens.sqlite)))
        let median = { (values: [Double]) in values.sorted()[values.count / 2] }
        let derived = [
            ("allocated disk per value byte, files \(label)", median(disk["files"] ?? [0])),
            ("allocated disk per value byte, packed after compaction \(label)", median(disk["packed"] ?? [0])),
            (
                "allocated disk per value byte, packed under churn (maxSize = N values) \(label)",
                median(disk["packed churn"] ?? [0])
            ),
            ("allocated disk per value byte, sqlite \(label)", median(disk["sqlite"] ?? [0])),
        ]
        return (rows, derived)
    }

    /// `ObjectCache` of ~320-byte notes (packed, the default) against `JSONEncoder`/`JSONDecoder`
    /// + SQLite one-blob rows, what a model layer would pick instead, and against the work it
    /// cannot avoid: the built-in coder + the packed engine with the same slots. The three run
    /// interleaved in chunks, operation by operation in the same rounds.
    func noteWorkloads() throws -> ([(engine: Figure, floor: Figure?)], [(String, Double)]) {
        let notes = (0..<count).map(SmallNote.make)
        let keys = (0..<count).map { "note-\($0)" }
        let encoder = JSONEncoder()
        let decoder = JSONDecoder()
        let directEncoder = DirectJSONEncoder()
        let directDecoder = DirectJSONDecoder()
        let engineKeys = keys.map { XXHashKeyHasher().engineKey(for: Data("s:\($0)".utf8)) }
        let envelope = Data(repeating: 1, count: 28 + 2 + keys[0].utf8.count)
        let encodedBytes = Double(try notes.reduce(0) { $0 + (try encoder.encode($1)).count })
        var runs: [String: [Run]] = [:]
        var diskRatios: (cache: [Double], sqlite: [Double]) = ([], [])
        for round in -1..<rounds {
            let directory = scratch.fresh("vs-sqlite-notes")
            let cache = try ObjectCache<String, SmallNote>(
                directory: directory, configuration: .init(maxDiskSize: Int.max, memoryLimit: 0))
            let engine = try DiskLRUCache(
                directory: scratch.fresh("vs-sqlite-engine"), appVersion: 1, valueCount: 2, maxSize: Int.max,
                options: .init(storage: .packed))
            let databasePath = scratch.fresh("sqlite-notes").path(percentEncoded: false)
            try FileManager.default.createDirectory(atPath: databasePath, withIntermediateDirectories: true)
            guard let database = SQLiteStore(path: databasePath + "/kv.sqlite", slots: 1) else { return ([], []) }
            let sets = try interleaved(
                count,
                [
                    { try cache.set(notes[$0], forKey: keys[$0]) },
                    { database.set(keys[$0], [try encoder.encode(notes[$0])]) },
                    { try engine.setData([envelope, try directEncoder.encode(notes[$0])], forKey: engineKeys[$0]) },
                ])
            database.checkpoint()
            diskRatios.cache.append(
                Double(allocatedBytes(atPath: directory.path(percentEncoded: false))) / encodedBytes)
            diskRatios.sqlite.append(Double(allocatedBytes(atPath: databasePath)) / encodedBytes)
            let gets = try interleaved(
                count,
                [
                    { keep(try cache.value(forKey: keys[$0])) },
                    { i in
                        database.forEachBlob(keys[i]) { blob in keep(try? decoder.decode(SmallNote.self, from: blob)) }
                    },
                    { i in
                        if let slots = try engine.data(forKey: engineKeys[i]) {
                            keep(try directDecoder.decode(SmallNote.self, from: slots[1]))
                        }
                    },
                ])
            try cache.close()
            try engine.close()
            guard round >= 0 else { continue }
            for (name, contenders) in [("set", sets), ("get", gets)] {
                runs[name, default: []].append(contenders[0])
                runs["\(name) sqlite", default: []].append(contenders[1])
                runs["\(name) engine", default: []].append(contenders[2])
            }
        }
        var rows: [(engine: Figure, floor: Figure?)] = []
        for name in ["set", "get"] {
            rows.append(
                summarizePair(
                    "ObjectCache packed vs sqlite \(name) note", runs[name] ?? [],
                    baseline: "JSONEncoder + sqlite \(name) note", runs["\(name) sqlite"] ?? []))
            rows.append(
                summarizePair(
                    "ObjectCache packed \(name) note", runs[name] ?? [],
                    baseline: "built-in coder + engine \(name) note", runs["\(name) engine"] ?? []))
        }
        let median = { (values: [Double]) in values.sorted()[values.count / 2] }
        return (
            rows,
            [
                ("allocated disk per encoded byte, ObjectCache (packed), small notes", median(diskRatios.cache)),
                ("allocated disk per encoded byte, sqlite, small notes", median(diskRatios.sqlite)),
            ]
        )
    }
}
