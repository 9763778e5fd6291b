import Foundation
import SwiftyCacheTestSupport
import Testing

@testable import SwiftyCacheCore

/// `BLOCK` lines: the committed entries of a packed journal's rebuild, up to 32 in a line, in
/// binary (hexadecimal keys as bytes), escaped so that no payload byte ends the line, under the
/// line's check. They replay as the `CLEAN` lines they stand for; a damaged one loads nothing
/// and never stops the replay.
@Suite struct JournalBlockTests {
    static let header = Journal.header(appVersion: 1, valueCount: 2, format: .packed(inlineLimit: 16_384))

    struct Entry: Equatable {
        var key: String
        var lengths: SlotLengths
        var location: ValueLocation
    }

    /// The block lines (and text lines for keys a block cannot hold) a rebuild writes.
    static func blockLines(_ entries: [Entry], valueCount: Int = 2) -> [UInt8] {
        var bytes: [UInt8] = []
        var encoder = JournalBlock.Encoder(valueCount: valueCount)
        for entry in entries {
            var key = entry.key
            key.withUTF8 { key in
                if encoder.canHold(key: key) {
                    encoder.append(key: key, lengths: entry.lengths, location: entry.location, to: &bytes)
                } else {
                    encoder.flush(to: &bytes)
                    Journal.appendLine(
                        .clean(lengths: entry.lengths, location: entry.location), key: key,
                        format: .packed(inlineLimit: 16_384), to: &bytes)
                }
            }
        }
        encoder.flush(to: &bytes)
        return bytes
    }

    static func parse(_ body: [UInt8], valueCount: Int = 2) -> (records: [Entry], summary: JournalParser.Summary) {
        var records: [Entry] = []
        var parser = JournalParser(appVersion: 1, valueCount: valueCount, format: .packed(inlineLimit: 16_384))
        let bytes =
            Array(Journal.header(appVersion: 1, valueCount: valueCount, format: .packed(inlineLimit: 16_384)).utf8)
            + body
        bytes.withUnsafeBytes { buffer in
            parser.consume(buffer) { key, operation in
                if case .clean(let lengths, let location) = operation {
                    records.append(Entry(key: key, lengths: lengths, location: location))
                }
            }
        }
        return (records, parser.finish())
    }

    /// 64 hexadecimal digits, as `ObjectCache` names entries.
    static func hexKey(_ i: Int) -> String {
        var generator = SplitMix(state: UInt64(i))
        return (0..<4).map { _ in String(format: "%016llx", generator.next()) }.joined()
    }

    static func entries(_ count: Int) -> [Entry] {
        (0..<count).map { i in
            Entry(
                key: hexKey(i), lengths: [60 + i % 7, 280 + i],
                location: ValueLocation(segment: UInt32(1 + i % 3), offset: Int64(i) * 397))
        }
    }

    @Test func blocksReplayAsTheCleanLinesTheyStandFor() {
        // Hex keys packed to bytes, short and odd-length keys as they are, a key too long for a
        // block as a text line between blocks: all in their order.
        var entries = Self.entries(300)
        entries.insert(Entry(key: "k", lengths: [0, 1], location: ValueLocation(segment: 9, offset: 0)), at: 5)
        entries.insert(Entry(key: "abc", lengths: [1, 2], location: ValueLocation(segment: 2, offset: 7)), at: 140)
        entries.insert(
            Entry(
                key: String(repeating: "x", count: 130), lengths: [3, 4], location: ValueLocation(segment: 1, offset: 9)
            ),
            at: 200)
        let (records, summary) = Self.parse(Self.blockLines(entries))
        #expect(summary.corruption == nil)
        #expect(summary.damagedLines.isEmpty)
        #expect(records == entries)
        #expect(summary.recordCount == entries.count)
        #expect(summary.blockRecordCount == entries.count - 1)
    }

    @Test func aBlockHoldsAtMost32EntriesAndTakesAboutFortyThreeBytesAnEntry() {
        let entries = Self.entries(1_000)
        let bytes = Self.blockLines(entries)
        let lines = bytes.split(separator: UInt8(ascii: "\n"))
        #expect(lines.count == (1_000 + 31) / 32)
        #expect(lines.allSatisfy { $0.starts(with: Array("BLOCK ".utf8)) })
        // Key 33, lengths 3, segment 1, offset 1 to 3 bytes; escapes and each line's verb,
        // check and newline add about a byte an entry.
        #expect(Double(bytes.count) / 1_000 < 44)
    }

    /// Past 64 slots entries stay text lines, and a block is written out once its payload
    /// reaches 16 KiB: no block line comes near the longest line the parser takes.
    @Test func blocksStayShortWhateverTheSlots() {
        let wide = (0..<3).map { i in
            Entry(
                key: Self.hexKey(i), lengths: SlotLengths(Array(repeating: Int.max / 128, count: 65)), location: .none)
        }
        let wideLines = Self.blockLines(wide, valueCount: 65)
        #expect(!wideLines.starts(with: Array("BLOCK ".utf8)))
        #expect(Self.parse(wideLines, valueCount: 65).records == wide)
        let many = (0..<32).map { i in
            Entry(
                key: Self.hexKey(i), lengths: SlotLengths(Array(repeating: Int.max / 128, count: 64)),
                location: ValueLocation(segment: 1, offset: 1))
        }
        let manyLines = Self.blockLines(many, valueCount: 64)
        let lines = manyLines.split(separator: UInt8(ascii: "\n"))
        #expect(lines.count > 1)
        #expect(lines.allSatisfy { $0.count < 40 << 10 })
        #expect(Self.parse(manyLines, valueCount: 64).records == many)
    }

    @Test func payloadBytesThatWouldEndTheLineAreEscaped() {
        // Keys whose packed bytes are 0x0a and 0x7f, an offset whose varint holds 0x0a.
        let entries = [
            Entry(key: "0a0a7f7f", lengths: [10, 127], location: ValueLocation(segment: 10, offset: 10)),
            Entry(key: "7f0a", lengths: [0x7F, 0x0A], location: ValueLocation(segment: 0x7F, offset: 0x0A0A)),
        ]
        let bytes = Self.blockLines(entries)
        #expect(bytes.filter { $0 == UInt8(ascii: "\n") }.count == 1)
        #expect(Self.parse(bytes).records == entries)
    }

    @Test func aDamagedBlockLoadsNothingAndTheReplayGoesOn() {
        let entries = Self.entries(200)
        var bytes = Self.blockLines(entries)
        // A flipped bit in the first block's payload.
        bytes[40] ^= 0x04
        bytes += Array("READ \(entries[150].key)\n".utf8)
        let (records, summary) = Self.parse(bytes)
        #expect(summary.corruption == nil)
        #expect(summary.damagedLines.count == 1)
        #expect(records == Array(entries[32...]))
    }

    @Test func aBlockWithoutItsCheckIsDamagedEvenAsTheFirstLine() {
        let bytes = Self.blockLines(Self.entries(10))
        let withoutCheck = Array(bytes.dropLast(JournalLineCheck.length + 1)) + [UInt8(ascii: "\n")]
        let (records, summary) = Self.parse(withoutCheck)
        #expect(summary.corruption == nil)
        #expect(summary.damagedLines.count == 1)
        #expect(records.isEmpty)
    }

    /// A block whose check holds but whose payload does not decode (a hostile writer): damage,
    /// not a trap, whatever the bytes.
    @Test func checkedBlocksWithMalformedPayloadsAreDamage() {
        let malformed: [[UInt8]] = [
            [],  // no entry
            [0x00],  // a key of no bytes
            [0x05, 0x61],  // a key cut short
            [0x81, 0x12, 0x01],  // lengths missing
            [0x01, 0x2F, 0x01, 0x01, 0x01, 0x01],  // a key of "/"
            [0x01, 0x61] + [UInt8](repeating: 0xFF, count: 11),  // a varint past 64 bits
            [0x01, 0x61, 0x01, 0x01, 0xFF, 0xFF, 0xFF, 0xFF, 0x7F, 0x00],  // a segment past 32 bits
            [0x01, 0x61, 0x01, 0x01, 0x01, 0x7F],  // an escape at the end
            [0x01, 0x61, 0x01, 0x01, 0x01, 0x7F, 0x05, 0x01],  // an unknown escape
            [0x01, 0x61] + [0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x7F] + [
                0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x7F,
            ] + [0x01, 0x01],  // lengths past Int.max
        ]
        for payload in malformed {
            var line = Array("BLOCK ".utf8) + payload
            Array("k".utf8).withUnsafeBufferPointer { JournalLineCheck.append(key: $0, lineStart: 0, to: &line) }
            line.append(UInt8(ascii: "\n"))
            let (records, summary) = Self.parse(line)
            #expect(summary.corruption == nil)
            #expect(summary.damagedLines.count == 1, "payload \(payload)")
            #expect(records.isEmpty)
        }
    }

    /// Random damage to blocks: the parser never traps, and what it passes on is entries that
    /// were written, in their order; a damaged line costs the entries of its blocks only.
    @Test func randomDamageNeverInventsAnEntry() {
        let entries = Self.entries(300)
        let clean = Self.blockLines(entries)
        var generator = SplitMix(state: 42)
        var damagedRuns = 0
        for _ in 0..<500 {
            var bytes = clean
            for _ in 0..<(1 + Int(generator.next() % 4)) {
                let position = Int(generator.next() % UInt64(bytes.count))
                bytes[position] = UInt8(truncatingIfNeeded: generator.next())
            }
            let (records, summary) = Self.parse(bytes)
            var next = entries.startIndex
            for record in records {
                guard let found = entries[next...].firstIndex(of: record) else {
                    Issue.record("an entry that was never written: \(record.key)")
                    break
                }
                next = found + 1
            }
            if summary.corruption == nil && !summary.damagedLines.isEmpty {
                damagedRuns += 1
                // Each damaged line held at most two blocks (a damaged newline joins two).
                #expect(records.count >= 300 - summary.damagedLines.count * 2 * JournalBlock.maximumEntries)
            }
        }
        #expect(damagedRuns > 400)
    }

    /// A cache of 64-digit keys and three slots (an index the saved index's image cannot hold),
    /// compacted and closed: the journal is blocks, about 43 bytes an
    /// entry, the clean marker carries no snapshot, and the reopen replays the blocks into the
    /// same entries in the same order, without a sweep. Once more lines than an eighth of the
    /// entries follow the blocks, a close writes the snapshot again.
    @Test func aCompactedCacheClosesWithoutASnapshotAndReopensWhole() throws {
        let directory = TemporaryDirectory()
        func open(readOnly: Bool = false) throws -> DiskLRUCache {
            try DiskLRUCache(
                directory: directory.url, appVersion: 1, valueCount: 3, maxSize: Int.max,
                options: DiskLRUCache.Options(isReadOnly: readOnly, storage: .packed))
        }
        let keys = (0..<1_000).map(Self.hexKey)
        let cache = try open()
        for (i, key) in keys.enumerated() {
            try cache.setData([Data("a\(i)".utf8), Data("b\(i)".utf8), Data()], forKey: key)
        }
        for key in keys.prefix(100) { _ = try cache.data(forKey: key) }
        try cache.compact()
        try cache.close()
        let journal = try Data(contentsOf: directory.url.appending(path: "journal")).count
        #expect(Double(journal) / 1_000 < 48)
        #expect(try JournalFixture.blockLineCount(in: directory.url) == 1_000 / 32 + 1)
        let marker = try Data(contentsOf: directory.url.appending(path: "journal.clean")).count
        #expect(marker < 100)

        let reopened = try open()
        #expect(!reopened.recoveryReport.loadedSavedIndex)
        #expect(!reopened.recoveryReport.wasWiped)
        #expect(reopened.recoveryReport.removedStrayFiles == 0)
        #expect(try reopened.keys() == Array(keys[100...]) + Array(keys.prefix(100)))
        for (i, key) in keys.enumerated() {
            #expect(try reopened.data(forKey: key) == [Data("a\(i)".utf8), Data("b\(i)".utf8), Data()])
        }
        // A read-only cache follows the same journal.
        let reader = try open(readOnly: true)
        #expect(try reader.data(forKey: keys[500]) == [Data("a500".utf8), Data("b500".utf8), Data()])
        try reader.close()
        // 1,000 reads above and 200 sets: more lines after the blocks than an eighth of the
        // entries, so the close leaves a snapshot, which the next open loads.
        for i in 0..<200 { try reopened.setData([Data("c\(i)".utf8), Data("d".utf8), Data()], forKey: "extra-\(i)") }
        try reopened.close()
        #expect(try Data(contentsOf: directory.url.appending(path: "journal.clean")).count > 1_000 * 30)
        let again = try open()
        #expect(again.recoveryReport.loadedSavedIndex)
        #expect(try again.keys().count == 1_200)
        try again.close()
    }

    /// With two slots the same close leaves the saved index's image, which loads faster than the
    /// blocks replay (docs/PERFORMANCE.md), into the same entries in the same order.
    @Test func aCompactedCacheOfTwoSlotsClosesWithItsImage() throws {
        let directory = TemporaryDirectory()
        let options = DiskLRUCache.Options(storage: .packed)
        let keys = (0..<1_000).map(Self.hexKey)
        let cache = try DiskLRUCache(
            directory: directory.url, appVersion: 1, valueCount: 2, maxSize: Int.max, options: options)
        for (i, key) in keys.enumerated() { try cache.setData([Data("a\(i)".utf8), Data("b\(i)".utf8)], forKey: key) }
        for key in keys.prefix(100) { _ = try cache.data(forKey: key) }
        try cache.compact()
        try cache.close()
        let marker = try Data(contentsOf: directory.url.appending(path: "journal.clean"))
        #expect(marker.range(of: Data(SavedIndex.imageMagic)) != nil)
        let reopened = try DiskLRUCache(
            directory: directory.url, appVersion: 1, valueCount: 2, maxSize: Int.max, options: options)
        #expect(reopened.recoveryReport.loadedSavedIndex)
        #expect(reopened.recoveryReport.removedStrayFiles == 0)
        #expect(try reopened.keys() == Array(keys[100...]) + Array(keys.prefix(100)))
        for (i, key) in keys.enumerated() {
            #expect(try reopened.data(forKey: key) == [Data("a\(i)".utf8), Data("b\(i)".utf8)])
        }
        try reopened.close()
    }
}
