import Foundation
import SwiftyCacheTestSupport
import Testing

@testable import SwiftyCacheCore

/// The saved index's image: the index's arrays as the next open uses them, read back whole and
/// checked part by part, so that a damaged or forged image is refused (the journal is then
/// replayed), never loaded into a table that loses or mixes up a key.
@Suite struct SavedIndexImageTests {
    let directory = TemporaryDirectory()

    /// Keys of every form a table holds: raw inline, packed hexadecimal inline, and in the arena
    /// (33 bytes, odd-length and upper-case hexadecimal digits, 300 bytes with a two-byte length).
    static func key(_ number: Int) -> String {
        let hex = String(repeating: String(number, radix: 16), count: 64).prefix(64)
        switch number % 6 {
        case 0: return "k\(number)"
        case 1: return String(hex)
        case 2: return String(hex.prefix(40))
        case 3: return "a33-\(number)-" + String(repeating: "z", count: 33 - "a33-\(number)-".count)
        case 4: return String(hex.prefix(41)).uppercased() + "X"
        default: return "long-\(number)-" + String(repeating: "y", count: 300)
        }
    }

    /// A table with removals and touches, so that its order is not its records' and its
    /// buckets are more than an image of its size has.
    func filledTable(count: Int, valueCount: Int, storesLocations: Bool) -> EntryTable {
        var table = EntryTable()
        for number in 0..<(count * 2) {
            let index = table.insert(key: Self.key(number), valueCount: valueCount)
            table.setCommitted(
                index, lengths: SlotLengths((0..<valueCount).map { number &* 3 &+ $0 }),
                location: storesLocations
                    ? ValueLocation(segment: UInt32(number % 5 + 1), offset: Int64(number) * 40) : .none)
        }
        for number in stride(from: 0, to: count * 2, by: 2) {
            if let index = table.index(of: Self.key(number)) { table.remove(at: index) }
        }
        for number in stride(from: 1, to: count * 2, by: 7) {
            if let index = table.index(of: Self.key(number)) { table.touch(index) }
        }
        return table
    }

    func image(_ table: EntryTable, valueCount: Int, storesLocations: Bool, bufferSize: Int = 4_096) -> [UInt8] {
        var bytes: [UInt8] = []
        SavedIndex.writeImage(
            table, appVersion: 7, valueCount: valueCount, storesLocations: storesLocations, redundantOpCount: 9,
            bufferSize: bufferSize
        ) { piece in
            bytes.append(contentsOf: piece)
            return true
        }
        return bytes
    }

    func read(_ bytes: [UInt8], valueCount: Int = 2, storesLocations: Bool = true) throws -> (
        table: EntryTable, loaded: SavedIndex.Loaded
    )? {
        let url = directory.appending("image")
        try Data(bytes).write(to: url)
        let fileSystem = SystemFileSystem()
        let fd = try fileSystem.open(url.path, flags: OpenFlags.readOnly, mode: 0)
        defer { try? fileSystem.close(fd) }
        return SavedIndex.load(
            FileRegion(fileSystem: fileSystem, fd: fd, start: 0, count: bytes.count), appVersion: 7,
            valueCount: valueCount, storesLocations: storesLocations)
    }

    @Test(arguments: [(0, false), (1, true), (2, true), (2, false)])
    func anImageLoadsEveryKeyInItsOrder(valueCount: Int, storesLocations: Bool) throws {
        let table = filledTable(count: 600, valueCount: valueCount, storesLocations: storesLocations)
        let bytes = image(table, valueCount: valueCount, storesLocations: storesLocations)
        #expect(Array(bytes.prefix(8)) == SavedIndex.imageMagic)
        #expect(bytes == image(table, valueCount: valueCount, storesLocations: storesLocations, bufferSize: 1 << 20))
        var (loaded, summary) = try #require(try read(bytes, valueCount: valueCount, storesLocations: storesLocations))
        let total = table.indicesInLRUOrder.reduce(0) { $0 + (table.totalLength($1) ?? 0) }
        #expect(summary == SavedIndex.Loaded(redundantOpCount: 9, totalLength: total))
        #expect(loaded.count == 600)
        try loaded.expectSameEntries(as: table)
        #expect(loaded.index(of: Self.key(0)) == nil)
        // The loaded table goes on like any other: inserts, removals, touches.
        for number in 2_000..<2_300 {
            let index = loaded.insert(key: Self.key(number), valueCount: valueCount)
            loaded.setCommitted(index, lengths: SlotLengths(repeating: 1, count: valueCount))
        }
        for number in stride(from: 1, to: 1_200, by: 4) {
            if let index = loaded.index(of: Self.key(number)) { loaded.remove(at: index) }
        }
        #expect(loaded.invariantViolation() == nil)
        #expect(loaded.index(of: Self.key(2_150)) != nil)
        #expect(loaded.index(of: Self.key(3)) != nil)
        #expect(loaded.index(of: Self.key(5)) == nil)
    }

    @Test func anEmptyTableMakesAnEmptyImage() throws {
        let bytes = image(EntryTable(), valueCount: 2, storesLocations: true)
        let (loaded, summary) = try #require(try read(bytes))
        #expect(loaded.count == 0)
        #expect(summary.totalLength == 0)
    }

    /// A flipped bit anywhere, or a cut anywhere, is refused.
    @Test func damageAnywhereIsRefused() throws {
        let bytes = image(
            filledTable(count: 200, valueCount: 2, storesLocations: true), valueCount: 2, storesLocations: true)
        for position in stride(from: 0, to: bytes.count, by: 97) {
            var damaged = bytes
            damaged[position] ^= 0x04
            #expect(try read(damaged) == nil, "a bit flipped at \(position)")
        }
        for cut in [1, 8, 9, bytes.count / 2, bytes.count - 20] {
            #expect(try read(Array(bytes.dropLast(cut))) == nil, "\(cut) bytes cut")
        }
        #expect(try read(bytes, valueCount: 1) == nil)
        #expect(try read(bytes, storesLocations: false) == nil)
    }
}
