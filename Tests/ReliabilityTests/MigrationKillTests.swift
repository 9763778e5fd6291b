import Foundation
import SwiftyCacheCodable
import SwiftyCacheCore
import SwiftyCacheTestSupport
import Testing

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A process running `migrateAll()` is killed at a random moment of the pass: every entry is
/// then in its old version or its new one, never lost, torn or another key's, and a reopen
/// with the migration reads every value converted.
@Suite(.tags(.slow)) struct MigrationKillTests {
    struct NoteV1: Codable, Sendable {
        var title: String
        var body: String
    }

    struct NoteV2: Codable, Sendable, Equatable {
        var title: String
        var body: String
        var tags: [String]
    }

    static let entries = 1_500
    static let kills = 4

    static func v1(_ index: Int) -> NoteV1 {
        NoteV1(title: "note \(index)", body: String(repeating: "words of note \(index) ", count: 1 + index % 12))
    }

    @Test func killedDuringMigrateAllEveryEntryIsOldOrNew() throws {
        let directory = TemporaryDirectory()
        var generator = SystemRandomNumberGenerator()
        var killsInsideThePass = 0
        for round in 0..<Self.kills {
            let url = directory.appending("round-\(round)")
            let writer = try ObjectCache<String, NoteV1>(directory: url)
            try writer.set(contentsOf: (0..<Self.entries).map { ("n\($0)", Self.v1($0)) })
            try writer.close()

            // Into the pass, then SIGKILL.
            let wasRunning = try killWorkerAtRandom(
                ["migrator", url.path(percentEncoded: false)], maximumDelay: 30_000, using: &generator)
            #expect(wasRunning, "round \(round): the migrator stopped by itself")

            let reader = try ObjectCache<String, NoteV2>(
                directory: url, configuration: .init(schemaVersion: 2),
                migrations: [.from(1, as: NoteV1.self) { NoteV2(title: $0.title, body: $0.body, tags: ["v1"]) }])
            #expect(reader.count == Self.entries, "round \(round)")
            for index in 0..<Self.entries {
                let old = Self.v1(index)
                #expect(
                    try reader.value(forKey: "n\(index)") == NoteV2(title: old.title, body: old.body, tags: ["v1"]),
                    "round \(round): n\(index)")
            }
            let stillOld = reader.statistics.migrations
            if stillOld > 0 { killsInsideThePass += 1 }
            #expect(reader.statistics.decodeFailures == 0, "round \(round)")
            #expect(stillOld < Self.entries, "round \(round): the kill came before any entry was converted")
            try reader.close()
        }
        // A pass takes far longer than the kill's delay: most kills land inside it.
        #expect(killsInsideThePass > 0)
    }
}
