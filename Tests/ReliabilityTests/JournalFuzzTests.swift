import Foundation
import SwiftyCacheCore
import SwiftyCacheTestSupport
import Testing

extension Slow {
    /// Mutated journals: opening never crashes or hangs; it keeps the valid prefix, wipes the
    /// cache's own files, or refuses a file that is no longer a journal at all (touching nothing),
    /// and the cache works afterwards. 10,000 cases by default; `SWIFTYCACHE_FUZZ_CASES` sets the count.
    @Suite(.tags(.slow), .fullRunOnly) struct JournalFuzzTests {
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

        // MARK: Packed storage

        static let packedCases = max(Self.totalCases / 2, 8)

        /// A packed directory written by the engine: records and files, a compaction (MOVE
        /// lines), overwrites and a removal; its files by name, and the values it holds.
        static func packedBase(in directory: URL) throws -> (files: [String: [UInt8]], values: [String: [Data]]) {
            var options = DiskLRUCache.Options(storage: .packed(inlineLimit: 16))
            options.packedSegmentSize = 160
            let cache = try DiskLRUCache(
                directory: directory, appVersion: 1, valueCount: 2, maxSize: 1 << 20, options: options)
            var values: [String: [Data]] = [:]
            func set(_ key: String, _ first: String, _ second: String) throws {
                let pair = [Data(first.utf8), Data(second.utf8)]
                try cache.setData(pair, forKey: key)
                values[key] = pair
            }
            try set("alpha", "alpha-0", "alpha-1")
            try set("beta", "beta-0", "a value past the inline limit")
            try set("gamma", "gamma-0", "gamma-1")
            try set("delta", "delta-0", "delta-1")
            try set("alpha", "alpha-2", "alpha-3")
            try cache.removeValue(forKey: "gamma")
            values["gamma"] = nil
            try cache.compact()
            try set("epsilon", "eps-0", "eps-1")
            _ = try cache.data(forKey: "beta")
            try cache.close()
            var files: [String: [UInt8]] = [:]
            for name in try JournalFixture.fileNames(in: directory)
            where name != "journal.lock" && name != "journal.clean" {
                files[name] = Array(try Data(contentsOf: directory.appending(path: name)))
            }
            return (files, values)
        }

        /// Case `index`: the base directory's files with one of them mutated (or deleted), and
        /// that file's name.
        static func packedMutation(_ index: Int, of files: [String: [UInt8]]) -> (
            files: [String: [UInt8]], name: String
        ) {
            var generator = SplitMix(state: UInt64(index) &* 0xD6E8_FEB8_6659_FD93 &+ 7)
            var files = files
            let names = files.keys.sorted()
            let name = names[Int(generator.next() % UInt64(names.count))]
            guard var bytes = files[name], !bytes.isEmpty else { return (files, name) }
            switch index % 6 {
            case 0:  // truncated anywhere
                bytes = Array(bytes.prefix(Int(generator.next() % UInt64(bytes.count))))
            case 1:  // bits flipped
                for _ in 0...(generator.next() % 3) {
                    bytes[Int(generator.next() % UInt64(bytes.count))] ^= UInt8(1 << (generator.next() % 8))
                }
            case 2:  // a run of zeros, as a power loss leaves them
                let start = Int(generator.next() % UInt64(bytes.count))
                let end = min(bytes.count, start + 1 + Int(generator.next() % 40))
                for i in start..<end { bytes[i] = 0 }
            case 3:  // the file is gone
                files[name] = nil
                return (files, name)
            case 4:  // garbage appended
                bytes += (0..<Int(1 + generator.next() % 64)).map { _ in UInt8(truncatingIfNeeded: generator.next()) }
            default:  // a journal line's numbers changed: lengths, segments, offsets
                guard name == "journal" else {
                    bytes[Int(generator.next() % UInt64(bytes.count))] = UInt8(truncatingIfNeeded: generator.next())
                    break
                }
                var text = String(decoding: bytes, as: UTF8.self)
                let numbers = ["0", "1", "2", "7", "99", "-1", "4294967296", "9223372036854775807", "160", "17"]
                var lines = text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
                let lineIndex = 6 + Int(generator.next() % UInt64(max(1, lines.count - 7)))
                if lineIndex < lines.count {
                    var fields = lines[lineIndex].split(separator: " ").map(String.init)
                    if fields.count > 2 {
                        let field = 2 + Int(generator.next() % UInt64(fields.count - 2))
                        fields[field] = numbers[Int(generator.next() % UInt64(numbers.count))]
                        lines[lineIndex] = fields.joined(separator: " ")
                    }
                }
                text = lines.joined(separator: "\n")
                bytes = Array(text.utf8)
            }
            files[name] = bytes
            return (files, name)
        }

        /// Mutated packed directories (journal, segments and value files): opening never
        /// crashes or hangs, every entry it keeps reads back exactly the bytes written, or as a
        /// miss, never other bytes, and the cache works afterwards.
        @Test(arguments: 0..<4)
        func mutatedPackedDirectoriesNeverCrashOrReturnWrongBytes(chunk: Int) throws {
            let root = TemporaryDirectory("packed-fuzz-\(chunk)")
            let (base, values) = try Self.packedBase(in: root.appending("base"))
            var kept = 0
            var misses = 0
            var refused = 0
            for index in stride(from: chunk, to: Self.packedCases, by: 4) {
                let directory = root.appending("\(index)")
                try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
                let (mutated, mutatedName) = Self.packedMutation(index, of: base)
                for (name, bytes) in mutated {
                    try Data(bytes).write(to: directory.appending(path: name))
                }
                let cache: DiskLRUCache
                do {
                    cache = try DiskLRUCache(
                        directory: directory, appVersion: 1, valueCount: 2, maxSize: 1 << 20,
                        options: .init(storage: .packed(inlineLimit: 16)))
                } catch let error as CacheError
                    where error.code == .notACacheDirectory || error.code == .storageMismatch
                {
                    refused += 1
                    try FileManager.default.removeItem(at: directory)
                    continue
                } catch {
                    Issue.record("case \(index): open threw \(error)")
                    continue
                }
                for key in try cache.keys() {
                    if let read = try cache.data(forKey: key) {
                        // A slot kept in its own file carries no checksum (as in file storage):
                        // a file changed in place at the same length reads as it now is.
                        for slot in 0..<2 where mutatedName != "\(key).\(slot)" {
                            #expect(
                                read[slot] == values[key]?[slot], "case \(index): \(key) slot \(slot) read other bytes")
                        }
                        kept += 1
                    } else {
                        misses += 1
                    }
                }
                try cache.setData([Data("new".utf8), Data("entry past the inline limit".utf8)], forKey: "fresh")
                #expect(
                    try cache.data(forKey: "fresh") == [Data("new".utf8), Data("entry past the inline limit".utf8)],
                    "case \(index)")
                try cache.close()
                try FileManager.default.removeItem(at: directory)
            }
            #expect(kept > 0 && misses > 0)
            print(
                "packed fuzz chunk \(chunk): \(kept) entries read back exact, \(misses) misses, \(refused) directories refused"
            )
        }
    }
}
