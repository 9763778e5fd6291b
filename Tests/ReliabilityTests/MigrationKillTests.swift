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

            let process = Process()
            process.executableURL = reliabilityWorker
            process.arguments = ["migrator", url.path(percentEncoded: false)]
            let output = Pipe()
            process.standardOutput = output
            try process.run()
            var said = Data()
            while !String(decoding: said, as: UTF8.self).contains("ready") {
                let chunk = output.fileHandleForReading.availableData
                guard !chunk.isEmpty else { break }
                said.append(chunk)
            }
            // Into the pass: a random number of microseconds, then SIGKILL. Not a wait for
            // anything: the moment of the kill is random by design.
            usleep(UInt32.random(in: 0...30_000, using: &generator))
            #expect(process.isRunning, "round \(round): the migrator stopped by itself")
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()

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
