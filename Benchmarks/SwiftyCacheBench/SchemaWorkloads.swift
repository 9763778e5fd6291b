import Foundation
import SwiftyCacheCodable
import SwiftyCacheCore

/// `SmallNote` one schema version earlier: without its tags.
struct SmallNoteV1: Codable, Sendable {
    var id: Int
    var title: String
    var modified: Date
    var body: String
}

/// Migrations and fetch-through (`--workload schema`), each against its baseline in the same
/// rounds:
/// - a disk read of an entry one schema version old (decoded as the old type and converted;
///   the cache opened read-only, so every read converts) against a read of a current entry;
/// - the first read of an old entry in a writable cache (converted and written back) against a
///   read of a current one;
/// - a fetch-through hit (a value in memory younger than `maxAge`) against `value(forKey:)`
///   hitting memory, both `async`, from a task and from the main actor.
struct SchemaWorkloads {
    let count: Int
    let rounds: Int
    let scratch: Scratch

    static func migration() -> SchemaMigration<SmallNote> {
        .from(1, as: SmallNoteV1.self) {
            SmallNote(id: $0.id, title: $0.title, tags: [], modified: $0.modified, body: $0.body)
        }
    }

    /// A directory of `count` notes written in version 1, and one of the same notes in version 2.
    private func directories() throws -> (old: URL, current: URL) {
        let old = scratch.fresh("schema-old")
        let current = scratch.fresh("schema-current")
        let v1 = try ObjectCache<String, SmallNoteV1>(directory: old, configuration: .init(maxDiskSize: Int.max))
        let v2 = try ObjectCache<String, SmallNote>(
            directory: current, configuration: .init(maxDiskSize: Int.max, schemaVersion: 2))
        for i in 0..<count {
            let note = SmallNote.make(i)
            try v1.set(SmallNoteV1(id: i, title: note.title, modified: note.modified, body: note.body), forKey: "n\(i)")
            try v2.set(note, forKey: "n\(i)")
        }
        try v1.close()
        try v2.close()
        return (old, current)
    }

    func run() async throws -> [(engine: Figure, floor: Figure?)] {
        let keys = (0..<count).map { "n\($0)" }
        let count = count
        var runs: [String: [Run]] = [:]
        for round in -1..<rounds {
            let (old, current) = try directories()
            // Read-only, no memory tier: every read decodes (and converts) from disk.
            let readOnly = ObjectCacheConfiguration(
                maxDiskSize: Int.max, memoryLimit: 0, schemaVersion: 2, isReadOnly: true)
            let oldReader = try ObjectCache<String, SmallNote>(
                directory: old, configuration: readOnly, migrations: [Self.migration()])
            let currentReader = try ObjectCache<String, SmallNote>(directory: current, configuration: readOnly)
            let (migrated, plain) = try alternating(
                count, first: { keep(try oldReader.value(forKey: keys[$0])) },
                second: { keep(try currentReader.value(forKey: keys[$0])) })
            try await oldReader.close()
            try await currentReader.close()

            // Writable: the first read of each old entry converts it and writes it back.
            let writable = ObjectCacheConfiguration(maxDiskSize: Int.max, memoryLimit: 0, schemaVersion: 2)
            let oldWriter = try ObjectCache<String, SmallNote>(
                directory: old, configuration: writable, migrations: [Self.migration()])
            let currentWriter = try ObjectCache<String, SmallNote>(directory: current, configuration: writable)
            let (writtenBack, plainWritable) = try alternating(
                count, first: { keep(try oldWriter.value(forKey: keys[$0])) },
                second: { keep(try currentWriter.value(forKey: keys[$0])) })
            try await oldWriter.close()

            // Fetch-through hits against plain memory hits, on the same cache.
            let memory = try ObjectCache<String, SmallNote>(
                directory: scratch.fresh("schema-fetch"), configuration: .init(maxDiskSize: Int.max, memoryLimit: count)
            )
            for i in 0..<count { try await memory.set(SmallNote.make(i), forKey: keys[i]) }
            // Whole passes over the keys as chunks, five of them: chunks of 2,000 hits (half a
            // millisecond) varied by 2× from one to the next, with the task's thread.
            let (fetchHit, plainHit) = await alternatingBothAsync(
                5 * count, chunk: count,
                first: { range in
                    for i in range {
                        keep(
                            try? await memory.value(forKey: keys[i % count], maxAge: .seconds(3_600)) { _ in
                                throw CancellationError()
                            })
                    }
                },
                second: { range in
                    for i in range { keep(try? await memory.value(forKey: keys[i % count])) }
                })
            // The same from the main actor, where an app's views ask.
            let (mainFetchHit, mainPlainHit) = await alternatingBothAsync(
                5 * count, chunk: count,
                first: { @MainActor range in
                    for i in range {
                        keep(
                            try? await memory.value(forKey: keys[i % count], maxAge: .seconds(3_600)) { _ in
                                throw CancellationError()
                            })
                    }
                },
                second: { @MainActor range in
                    for i in range { keep(try? await memory.value(forKey: keys[i % count])) }
                })
            try await memory.close()
            try await currentWriter.close()
            guard round >= 0 else { continue }
            runs["migrated", default: []].append(migrated)
            runs["plain", default: []].append(plain)
            runs["written back", default: []].append(writtenBack)
            runs["plain writable", default: []].append(plainWritable)
            runs["fetch hit", default: []].append(fetchHit)
            runs["plain hit", default: []].append(plainHit)
            runs["main fetch hit", default: []].append(mainFetchHit)
            runs["main plain hit", default: []].append(mainPlainHit)
        }
        return [
            summarizePair(
                "get of a note one version old (read-only: migrated)", runs["migrated"] ?? [],
                baseline: "get of a current note (read-only)", runs["plain"] ?? []),
            summarizePair(
                "first get of an old note (migrated, written back)", runs["written back"] ?? [],
                baseline: "get of a current note", runs["plain writable"] ?? []),
            summarizePair(
                "fetch-through hit (memory, async)", runs["fetch hit"] ?? [],
                baseline: "value(forKey:) memory hit (async)", runs["plain hit"] ?? []),
            summarizePair(
                "fetch-through hit from the main actor", runs["main fetch hit"] ?? [],
                baseline: "value(forKey:) memory hit from the main actor", runs["main plain hit"] ?? []),
        ].map { (engine: $0.0, floor: $0.1) }
    }
}
