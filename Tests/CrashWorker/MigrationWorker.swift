import Foundation
import SwiftyCacheCodable
import SwiftyCacheCore

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The two versions of a value the migration kill test uses (`MigrationKillTests` declares
/// the same shapes).
struct WorkerNoteV1: Codable, Sendable {
    var title: String
    var body: String
}

struct WorkerNoteV2: Codable, Sendable {
    var title: String
    var body: String
    var tags: [String]
}

extension CrashWorker {
    /// `migrator DIR`: opens the object cache in DIR (written in schema version 1) with schema
    /// version 2 and a migration from 1, says `ready` when `migrateAll()` has converted its
    /// first batch, and waits to be killed once it is done (saying `done`).
    static func migrateUntilKilled(_ path: String) -> Never {
        let finished = DispatchSemaphore(value: 0)
        Task {
            do {
                let cache = try ObjectCache<String, WorkerNoteV2>(
                    directory: URL(filePath: path), configuration: .init(schemaVersion: 2),
                    migrations: [
                        .from(1, as: WorkerNoteV1.self) { WorkerNoteV2(title: $0.title, body: $0.body, tags: ["v1"]) }
                    ])
                let announced = LockedState(false)
                try await cache.migrateAll { _ in
                    let first = announced.withLock { wasSet in
                        defer { wasSet = true }
                        return !wasSet
                    }
                    if first { say("ready") }
                }
                say("done")
            } catch {
                FileHandle.standardError.write(Data("migrator failed: \(error)\n".utf8))
                exit(8)
            }
            finished.signal()
        }
        finished.wait()
        while true { pause() }
    }
}
