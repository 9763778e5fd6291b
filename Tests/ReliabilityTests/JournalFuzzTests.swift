import Foundation
import SwiftyCacheCore
import SwiftyCacheTestSupport
import Testing

extension Slow {
    /// Mutated journals: opening never crashes or hangs; it keeps the valid prefix, wipes the
    /// cache's own files, or refuses a file that is no longer a journal at all (touching nothing),
    /// and the cache works afterwards. 10,000 cases by default; `SWIFTYCACHE_FUZZ_CASES` sets the count.
    @Suite(.tags(.slow)) struct JournalFuzzTests {
        static let totalCases =
            ProcessInfo.processInfo.environment["SWIFTYCACHE_FUZZ_CASES"].flatMap(Int.init) ?? 10_000
        static let chunks = 8

        static let header = "libcore.io.DiskLruCache\n1\n1\n2\n\n"
        static let baseLines = [
            "DIRTY alpha", "CLEAN alpha 3 5", "DIRTY beta", "CLEAN beta 2 4", "READ alpha", "DIRTY gamma",
            "REMOVE gamma",
            "DIRTY delta", "CLEAN delta 6 1", "READ beta", "DIRTY alpha", "CLEAN alpha 4 4",
        ]
        static let files = ["alpha.0": 4, "alpha.1": 4, "beta.0": 2, "beta.1": 4, "delta.0": 6, "delta.1": 1]

        /// A deterministic mutation of the base journal for case `index`.
        static func mutation(_ index: Int) -> [UInt8] {
            var generator = SplitMix(state: UInt64(index) &* 0x9E37_79B9_7F4A_7C15 &+ 1)
            let base = Array((header + baseLines.joined(separator: "\n") + "\n").utf8)
            switch index % 10 {
            case 0:  // truncation at every byte, cycling through the file
                return Array(base.prefix(index / 10 % (base.count + 1)))
            case 1:  // one to four bit flips
                var bytes = base
                for _ in 0...(generator.next() % 4) {
                    let position = Int(generator.next() % UInt64(bytes.count))
                    bytes[position] ^= UInt8(1 << (generator.next() % 8))
                }
                return bytes
            case 2:  // duplicated, deleted and reordered lines
                var lines = baseLines
                for _ in 0...(generator.next() % 3) {
                    let i = Int(generator.next() % UInt64(lines.count))
                    let j = Int(generator.next() % UInt64(lines.count))
                    switch generator.next() % 3 {
                    case 0: lines.insert(lines[i], at: j)
                    case 1: lines.remove(at: i)
                    default: lines.swapAt(i, j)
                    }
                    if lines.isEmpty { break }
                }
                return Array((header + lines.joined(separator: "\n") + "\n").utf8)
            case 3:  // huge, negative, signed and malformed numbers
                let numbers = [
                    "99999999999999999999", "9223372036854775807", "-1", "+3", "0x10", "", "1e3",
                    "00000000000000000003",
                ]
                let number = numbers[Int(generator.next() % UInt64(numbers.count))]
                return Array((header + "CLEAN alpha \(number) 4\n").utf8)
            case 4:  // wrong length counts
                let count = Int(generator.next() % 6)
                return Array((header + "CLEAN alpha" + String(repeating: " 1", count: count) + "\n").utf8)
            case 5:  // bytes that are not UTF-8, anywhere
                var bytes = base
                let position = Int(generator.next() % UInt64(bytes.count))
                bytes.insert(contentsOf: [0xFF, 0xC3, 0x28, 0x00][...Int(generator.next() % 4)], at: position)
                return bytes
            case 6:  // very long lines
                let length = [200, 5_000, 100_000, 1_000_000][Int(generator.next() % 4)]
                let key = String(repeating: "a", count: length)
                return Array((header + baseLines.prefix(2).joined(separator: "\n") + "\nCLEAN \(key) 1 1\n").utf8)
            case 7:  // random garbage after a valid header
                return Array(header.utf8)
                    + (0..<Int(generator.next() % 300)).map { _ in UInt8(truncatingIfNeeded: generator.next()) }
            case 8:  // a damaged header
                var lines = header.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
                let i = Int(generator.next() % 5)
                lines[i] =
                    ["", "libcore.io.DiskLruCache2", "2", "-1", "x", String(repeating: "9", count: 30)][
                        Int(generator.next() % 6)]
                return Array((lines.joined(separator: "\n") + baseLines.joined(separator: "\n") + "\n").utf8)
            default:  // keys that are not keys
                let keys = [
                    "../escape", "UPPER", "has space", "", "a/b", "dot.key", "tab\tkey",
                    String(repeating: "k", count: 121),
                ]
                return Array((header + "CLEAN \(keys[Int(generator.next() % UInt64(keys.count))]) 1 1\n").utf8)
            }
        }

        @Test(arguments: 0..<chunks)
        func mutatedJournalsNeverCrashAndLeaveAWorkingCache(chunk: Int) throws {
            let root = TemporaryDirectory("fuzz-\(chunk)")
            var wiped = 0
            var kept = 0
            var refused = 0
            for index in stride(from: chunk, to: Self.totalCases, by: Self.chunks) {
                let directory = root.appending("\(index)")
                try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
                for (name, length) in Self.files {
                    try Data(repeating: UInt8(ascii: "v"), count: length).write(to: directory.appending(path: name))
                }
                try Data(Self.mutation(index)).write(to: directory.appending(path: "journal"))
                let before = try JournalFixture.fileNames(in: directory)
                let cache: DiskLRUCache
                do {
                    cache = try DiskLRUCache(directory: directory, appVersion: 1, valueCount: 2, maxSize: 1 << 20)
                } catch let error as CacheError where error.code == .notACacheDirectory {
                    // A first line that is no longer the magic: refused, and nothing touched.
                    refused += 1
                    #expect(try JournalFixture.fileNames(in: directory) == before, "case \(index)")
                    #expect(try Data(contentsOf: directory.appending(path: "journal")) == Data(Self.mutation(index)))
                    try FileManager.default.removeItem(at: directory)
                    continue
                } catch {
                    Issue.record("case \(index): open threw \(error)")
                    continue
                }
                if cache.recoveryReport.wasWiped { wiped += 1 } else { kept += 1 }
                // What it kept reads back whole, or as a miss.
                for key in try cache.keys() {
                    if let snapshot = try cache.snapshot(forKey: key) {
                        for slot in 0..<2 {
                            #expect(try snapshot.readData(at: slot).count == snapshot.lengths[slot], "case \(index)")
                        }
                    }
                }
                try cache.setData([Data("new".utf8), Data("entry".utf8)], forKey: "fresh")
                #expect(try cache.data(forKey: "fresh") == [Data("new".utf8), Data("entry".utf8)], "case \(index)")
                try cache.close()
                try FileManager.default.removeItem(at: directory)
            }
            #expect(wiped > 0 && kept > 0)
            print(
                "journal fuzz chunk \(chunk): \(wiped + kept + refused) cases, \(wiped) wiped, \(kept) kept a valid prefix, "
                    + "\(refused) refused as not a journal")
        }
    }
}
