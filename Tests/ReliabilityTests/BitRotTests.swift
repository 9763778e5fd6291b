import Foundation
import SwiftyCacheCore
import SwiftyCacheTestSupport
import Testing

/// One flipped bit in a packed directory costs what it touches: the record it lands in, or the
/// entry whose journal line it lands in (the entries of a `BLOCK` line, at most 32), never the
/// cache, and never wrong bytes. The target:
/// at least 99% of the records a flip did not touch read back, over every case.
@Suite struct BitRotTests {
    static let cases = ProcessInfo.processInfo.environment["SWIFTYCACHE_BIT_FLIPS"].flatMap(Int.init) ?? 1_000

    /// What a directory holds, as written: each live key's values, and where its record is.
    struct Written {
        var values: [String: [Data]] = [:]
        /// Segment number, offset and size of each live key's record.
        var records: [String: (segment: Int, offset: Int, size: Int)] = [:]
    }

    /// A packed directory with overwrites, removals, reads and a compaction, left as a killed
    /// process leaves it (no clean marker: opening replays the journal).
    static func writeDirectory(at url: URL) throws -> Written {
        var options = DiskLRUCache.Options(storage: .packed)
        options.packedSegmentSize = 16 << 10
        let cache = try DiskLRUCache(directory: url, appVersion: 1, valueCount: 2, maxSize: 1 << 30, options: options)
        var random = SplitMix(state: 0xB17_0F_B17)
        var written = Written()
        for round in 0..<3 {
            for index in 0..<240 where round == 0 || index % 3 == round {
                let key = "key-\(index)"
                let values = (0..<2).map {
                    CheckedValue.make(
                        key: key, slot: $0, sequence: round, fillerLength: Int.random(in: 20...380, using: &random))
                }
                try cache.setData(values, forKey: key)
                written.values[key] = values
            }
        }
        for index in stride(from: 5, to: 240, by: 10) {
            _ = try cache.removeValue(forKey: "key-\(index)")
            written.values["key-\(index)"] = nil
        }
        for index in stride(from: 0, to: 240, by: 7) { _ = try cache.data(forKey: "key-\(index)") }
        try cache.compact()
        try cache.flush()
        cache.simulateCrash()
        // Where each live record is: the journal's last CLEAN or MOVE line for the key.
        for line in try JournalFixture.rawBodyLines(in: url) {
            let fields = line.split(separator: " ")
            guard fields.count >= 4, let key = fields.dropFirst().first.map(String.init),
                let values = written.values[key], let segment = Int(fields[fields.count - 2]),
                let offset = Int(fields[fields.count - 1])
            else { continue }
            if fields[0] == "CLEAN" || fields[0] == "MOVE" {
                written.records[key] = (segment, offset, 12 + values[0].count + values[1].count)
            }
        }
        return written
    }

    /// The keys whose line holds byte `offset` of the journal (both lines, for the newline
    /// between them): the key a text line names, every key of a `BLOCK` line.
    static func keysOfLine(at offset: Int, in journal: [UInt8]) -> Set<String> {
        func line(around index: Int) -> [String] {
            guard index >= 0, index < journal.count else { return [] }
            let start = journal[..<index].lastIndex(of: UInt8(ascii: "\n")).map { $0 + 1 } ?? 0
            let end = journal[index...].firstIndex(of: UInt8(ascii: "\n")) ?? journal.count
            let bytes = Array(journal[start..<end])
            if bytes.starts(with: Array("BLOCK ".utf8)) {
                let lines = (try? JournalFixture.expandBlock(bytes, valueCount: 2)) ?? []
                return lines.map { String($0.split(separator: " ")[1]) }
            }
            let fields = bytes.split(separator: UInt8(ascii: " "))
            return fields.count >= 2 ? [String(decoding: fields[1], as: UTF8.self)] : []
        }
        if journal[offset] == UInt8(ascii: "\n") {
            return Set(line(around: offset - 1) + line(around: offset + 1))
        }
        return Set(line(around: offset))
    }

    @Test(.tags(.slow), .fullRunOnly) func aFlippedBitCostsOnlyWhatItTouches() throws {
        let source = TemporaryDirectory("bitrot-source", inMemory: true)
        let written = try Self.writeDirectory(at: source.url)
        let files = try FileManager.default.contentsOfDirectory(atPath: source.url.path(percentEncoded: false))
            .filter { $0 == "journal" || $0.hasPrefix("segment-") }.sorted()
        var random = SplitMix(state: 0x5EED_B17)
        var (untouched, survived, wrong, wipes, journalCases, damagedLines, refusals) = (0, 0, 0, 0, 0, 0, 0)
        for index in 0..<Self.cases {
            let work = TemporaryDirectory("bitrot-case", inMemory: true)
            try FileManager.default.createDirectory(at: work.url, withIntermediateDirectories: true)
            let url = work.appending("cache")
            try FileManager.default.copyItem(at: source.url, to: url)
            // Half the flips in the journal, half in the segments.
            let name =
                index % 2 == 0 ? "journal" : files.filter { $0 != "journal" }.randomElement(using: &random) ?? "journal"
            let path = url.appending(path: name)
            var bytes = Array(try Data(contentsOf: path))
            let offset = Int.random(in: 0..<bytes.count, using: &random)
            let touched: Set<String>
            if name == "journal" {
                journalCases += 1
                touched = Self.keysOfLine(at: offset, in: bytes)
            } else {
                let segment = Int(name.dropFirst("segment-".count).prefix(8)) ?? 0
                touched = Set(
                    written.records.filter {
                        $0.value.segment == segment
                            && ($0.value.offset..<($0.value.offset + $0.value.size)).contains(offset)
                    }.keys)
            }
            bytes[offset] ^= 1 << UInt8.random(in: 0..<8, using: &random)
            try Data(bytes).write(to: path)
            guard
                let cache = try? DiskLRUCache(
                    directory: url, appVersion: 1, valueCount: 2, maxSize: 1 << 30, options: .init(storage: .packed))
            else {
                // Refused (a header no longer a journal's): every record is lost to this open.
                refusals += 1
                untouched += written.values.keys.filter { !touched.contains($0) }.prefix(48).count
                continue
            }
            if cache.recoveryReport.wasWiped { wipes += 1 }
            damagedLines += cache.recoveryReport.damagedJournalLines
            // Every touched key, and a sample of the others (a debug build checks the whole
            // index after every read, which makes reading all of them in every case slow).
            let sample = written.values.keys.sorted().filter { !touched.contains($0) }.shuffled(using: &random).prefix(
                48)
            for key in Array(touched) + sample {
                guard let values = written.values[key] else { continue }
                let read = try cache.data(forKey: key)
                if let read, read != values { wrong += 1 }
                guard !touched.contains(key) else { continue }
                untouched += 1
                if read == values { survived += 1 }
            }
            try cache.close()
        }
        let share = Double(survived) / Double(max(1, untouched))
        print(
            "bit rot, packed: \(Self.cases) single flips (\(journalCases) in the journal, the rest in segments); "
                + "\(survived) of \(untouched) untouched records sampled read back (\(String(format: "%.2f", share * 100))%); "
                + "wrong bytes \(wrong); wipes \(wipes); refused opens \(refusals); damaged journal lines found \(damagedLines)"
        )
        #expect(wrong == 0)
        #expect(share >= 0.99)
    }
}
