import Foundation
import SwiftyCacheTestSupport
import Testing

@testable import SwiftyCacheCore

/// A packed journal that several caches append to at once (`sharing: .processes`): a writer
/// killed in the middle of its `write` leaves the start of its line, and the next writer's
/// whole line follows it on the same line. The replay finds the whole line and skips the torn
/// start; a line damaged any other way stays damage.
@Suite struct JoinedLineTests {
    static let format = Journal.Format.packed(inlineLimit: 16_384)

    static func line(_ operation: Journal.Operation, _ key: String) -> [UInt8] {
        var bytes: [UInt8] = []
        Journal.appendLine(operation, key: key, format: format, to: &bytes)
        return bytes
    }

    static func clean(_ key: String, _ length: Int, at offset: Int64) -> [UInt8] {
        line(.clean(lengths: [length], location: ValueLocation(segment: 1, offset: offset)), key)
    }

    static func batch(_ keys: [String], from offset: Int64) -> [UInt8] {
        var bytes: [UInt8] = []
        let members = keys.enumerated().map { index, key in
            Journal.Member(
                operation: .clean(
                    lengths: [10], location: ValueLocation(segment: 2, offset: offset + Int64(index) * 64)),
                key: key)
        }
        Journal.appendBatchLine(members, format: format, to: &bytes)
        return bytes
    }

    /// The keys replayed as committed and removed, in order, and the summary.
    static func replay(_ body: [UInt8]) -> (records: [String], summary: JournalParser.Summary) {
        var records: [String] = []
        var parser = JournalParser(appVersion: 1, valueCount: 1, format: format)
        let bytes = Array(Journal.header(appVersion: 1, valueCount: 1, format: format).utf8) + body
        bytes.withUnsafeBytes { buffer in
            parser.consume(buffer) { key, operation in
                switch operation {
                case .clean: records.append(key)
                case .remove: records.append("-" + key)
                default: break
                }
            }
        }
        return (records, parser.finish())
    }

    @Test func everyTornStartOfALineIsSkippedAndTheWholeLineAfterItReplayed() {
        let before = Self.clean("before", 3, at: 0)
        let whole = Self.clean("whole", 7, at: 200)
        let after = Self.line(.remove, "before")
        for torn in [Self.clean("torn-key", 5, at: 100), Self.line(.remove, "torn-key")] {
            // Every length a `write` can stop at: the line's newline never reached the file.
            for cut in 1..<(torn.count - 1) {
                let (records, summary) = Self.replay(before + torn.prefix(cut) + whole + after)
                #expect(records == ["before", "whole", "-before"], "cut at \(cut)")
                #expect(summary.damagedLines.isEmpty, "cut at \(cut)")
                #expect(summary.joinedLineCount == 1, "cut at \(cut)")
                #expect(summary.corruption == nil)
            }
        }
    }

    @Test func aTornBatchIsNeverHalfReplayedAndABatchAfterATornLineIsWhole() {
        let tornBatch = Self.batch(["t1", "t2", "t3"], from: 0)
        let wholeBatch = Self.batch(["w1", "w2"], from: 1_000)
        let whole = Self.clean("whole", 7, at: 200)
        for cut in 1..<(tornBatch.count - 1) {
            // A torn batch, then a commit, then a batch: none of the torn batch's members.
            let (records, summary) = Self.replay(Array(tornBatch.prefix(cut)) + whole + wholeBatch)
            #expect(records == ["whole", "w1", "w2"], "cut at \(cut)")
            #expect(summary.damagedLines.isEmpty, "cut at \(cut)")
            // A torn batch, then a whole batch.
            let (again, _) = Self.replay(Array(tornBatch.prefix(cut)) + wholeBatch)
            #expect(again == ["w1", "w2"], "cut at \(cut)")
        }
        let torn = Self.clean("torn-key", 5, at: 100)
        for cut in 1..<(torn.count - 1) {
            #expect(Self.replay(Array(torn.prefix(cut)) + wholeBatch).records == ["w1", "w2"], "cut at \(cut)")
        }
    }

    @Test func twoTornStartsBeforeAWholeLine() {
        let first = Self.clean("first-torn", 5, at: 100)
        let second = Self.batch(["t1", "t2"], from: 0)
        let whole = Self.clean("whole", 7, at: 200)
        let (records, summary) = Self.replay(Array(first.prefix(9)) + Array(second.prefix(30)) + whole)
        #expect(records == ["whole"])
        #expect(summary.damagedLines.isEmpty)
    }

    @Test func aLineDamagedAnotherWayStaysDamage() {
        var damaged = Self.clean("victim", 5, at: 100)
        damaged[8] ^= 0x01  // a flipped bit in the key
        let (records, summary) = Self.replay(Self.clean("kept", 3, at: 0) + damaged)
        #expect(records == ["kept"])
        #expect(summary.damagedLines.count == 1)
        #expect(summary.joinedLineCount == 0)
        // A torn start, then a line damaged too: no whole line ends the pair.
        let torn = Self.clean("torn", 5, at: 100)
        var next = Self.clean("next", 9, at: 300)
        next[7] ^= 0x02
        let (kept, pair) = Self.replay(Self.clean("kept", 3, at: 0) + Array(torn.dropLast(4)) + next)
        #expect(kept == ["kept"])
        #expect(pair.damagedLines.count == 1)
        #expect(pair.joinedLineCount == 0)
    }

    @Test func aLineOfManyVerbsIsDamageAndCostsLittle() {
        // Crafted: more places that could start a line than a torn start offers.
        let whole = Self.clean("whole", 7, at: 200)
        let padding = Array(
            String(repeating: "CLEAN ", count: JournalParser.maximumJoinCandidates * 4 + 1).utf8)
        let (records, summary) = Self.replay(padding + whole)
        #expect(records.isEmpty)
        #expect(summary.damagedLines.count == 1)
        // Under the bound, the same line is found.
        let few = Array(String(repeating: "CLEAN ", count: 3).utf8)
        #expect(Self.replay(few + whole).records == ["whole"])
    }
}
