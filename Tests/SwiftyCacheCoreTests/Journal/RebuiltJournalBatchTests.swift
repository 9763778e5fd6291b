import Testing

@testable import SwiftyCacheCore

/// A batch of a rebuild outside the lock: the entries are copied from the index under the lock,
/// and their lines formatted after it, from the copy alone. What the index does after the copy
/// does not reach the lines; what the lines say of each entry is what a compact journal says.
@Suite struct RebuiltJournalBatchTests {
    static let format = Journal.Format.packed(inlineLimit: 16_384)

    /// A table of `count` committed entries, with hexadecimal keys (which blocks hold) and
    /// other keys (which stay text lines) mixed.
    static func table(_ count: Int) -> EntryTable {
        var table = EntryTable()
        for i in 0..<count {
            let key = i % 3 == 0 ? "note-\(i)" : JournalBlockTests.hexKey(i)
            let index = table.insert(key: key, valueCount: 2)
            table.setCommitted(index, lengths: [i, 2 * i], location: ValueLocation(segment: 1, offset: Int64(10 * i)))
        }
        return table
    }

    static func lines(of batch: RebuiltJournal.Batch) -> [UInt8] {
        var bytes: [UInt8] = []
        batch.appendLines(to: &bytes)
        return bytes
    }

    @Test func linesAreFormattedFromTheCopyNotFromTheIndexAsItIsLater() {
        var table = Self.table(100)
        let order = table.recordsInLRUOrder
        var batch = RebuiltJournal.Batch(format: Self.format, valueCount: 2)
        batch.copy(order, from: table)
        var expected = RebuiltJournal.Batch(format: Self.format, valueCount: 2)
        expected.copy(order, from: Self.table(100))

        // After the copy: entries removed, moved and added; their arena's space reclaimed.
        for index in 0..<60 { table.remove(at: index) }
        table.setLocation(70, ValueLocation(segment: 9, offset: 9))
        _ = table.insert(key: "added-later", valueCount: 2)

        let (records, summary) = JournalBlockTests.parse(Self.lines(of: batch))
        #expect(summary.damagedLines.isEmpty)
        #expect(records.count == 100)
        for (i, record) in records.enumerated() {
            #expect(record.key == (i % 3 == 0 ? "note-\(i)" : JournalBlockTests.hexKey(i)))
            #expect(record.lengths == [i, 2 * i])
            #expect(record.location == ValueLocation(segment: 1, offset: Int64(10 * i)))
        }
        #expect(Self.lines(of: batch) == Self.lines(of: expected))
        #expect(summary.blockRecordCount > 0, "hexadecimal keys go into BLOCK lines")
    }

    @Test func aJournaledEditIsDirtyAndAnUnjournaledNewEntryOrAFreeRecordHasNoLine() {
        var table = EntryTable()
        let committed = table.insert(key: "committed", valueCount: 2)
        table.setCommitted(committed, lengths: [1, 2], location: ValueLocation(segment: 1, offset: 0))
        let journaledEdit = table.insert(key: "journaled-edit", valueCount: 2)
        table.setEditor(journaledEdit, 7)
        table.setDirtyJournaled(journaledEdit, true)
        let newEdit = table.insert(key: "new-edit", valueCount: 2)
        table.setEditor(newEdit, 8)
        let removed = table.insert(key: "removed", valueCount: 2)
        table.remove(at: removed)

        var batch = RebuiltJournal.Batch(format: .files, valueCount: 2)
        batch.copy([UInt32(committed), UInt32(journaledEdit), UInt32(newEdit), UInt32(removed)], from: table)
        let text = String(decoding: Self.lines(of: batch), as: UTF8.self)
        #expect(text == "CLEAN committed 1 2\nDIRTY journaled-edit\n")
    }
}
