import Foundation
import Testing

/// `notes-offline demo`, the README's first command.
extension NotesOfflineEndToEndTests {
    @Test func theDemoStandsAloneAndItsCountsAgree() throws {
        let result = try cli.run(["demo"], withCacheDirectory: false)
        #expect(result.status == 0, "\(result.stderr)")
        let lines = result.stdout.split(separator: "\n", omittingEmptySubsequences: false)
        let first = try #require(lines.first)
        #expect(first.hasPrefix("demo cache: "))
        let path = first.dropFirst("demo cache: ".count).trimmingCharacters(in: .whitespaces)
        #expect(!path.contains("…") && !FileManager.default.fileExists(atPath: path))  // removed afterwards
        #expect(result.stdout.contains("6 pages cached: the index and 5 linked pages"))
        let rows = lines.drop { !$0.hasPrefix("PAGE") }.dropFirst().prefix { !$0.isEmpty }
        #expect(rows.count == 6)
        #expect(result.stdout.contains("pages:   6"))
        #expect(result.stdout.contains("The append-only journal"))
        for line in lines { #expect(line.count <= 80, "\(line.count): \(line)") }
        let kept = try cli.run(["demo", "--keep"])  // with --cache-dir: that folder, kept
        #expect(kept.status == 0)
        #expect(try cli.run(["stats"]).stdout.contains("pages:   6"))
    }
}
