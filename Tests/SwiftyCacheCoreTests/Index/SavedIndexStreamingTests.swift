import Foundation
import SwiftyCacheTestSupport
import Testing

@testable import SwiftyCacheCore

/// The saved index goes through a buffer of bounded size both ways, its checksum computed as
/// the bytes pass: with buffers far smaller than the snapshot, entries straddle every refill and
/// the bytes are the same whatever the buffer.
@Suite struct SavedIndexStreamingTests {
    let directory = TemporaryDirectory()

    func filledTable(count: Int) -> EntryTable {
        var table = EntryTable()
        for number in 0..<count {
            let key = "k\(number)-" + String(repeating: "x", count: (number * 37) % 200)
            let index = table.insert(key: key, valueCount: 2)
            table.setCommitted(
                index, lengths: [number, number * 1_000],
                location: ValueLocation(segment: UInt32(number % 7 + 1), offset: Int64(number) << 20))
        }
        return table
    }

    func written(_ table: EntryTable, bufferSize: Int) -> [UInt8] {
        var bytes: [UInt8] = []
        SavedIndex.write(
            table, appVersion: 3, valueCount: 2, storesLocations: true, redundantOpCount: 5, bufferSize: bufferSize
        ) { piece in
            bytes.append(contentsOf: piece)
            return true
        }
        return bytes
    }

    func read(_ bytes: [UInt8], bufferSize: Int) throws -> (EntryTable, SavedIndex.Loaded?) {
        let url = directory.appending("snapshot")
        try Data(bytes).write(to: url)
        let fileSystem = SystemFileSystem()
        let fd = try fileSystem.open(url.path, flags: OpenFlags.readOnly, mode: 0)
        defer { try? fileSystem.close(fd) }
        var table = EntryTable()
        let loaded = SavedIndex.read(
            FileRegion(fileSystem: fileSystem, fd: fd, start: 0, count: bytes.count), appVersion: 3, valueCount: 2,
            storesLocations: true, bufferSize: bufferSize, into: &table)
        return (table, loaded)
    }

    @Test(arguments: [600, 1_000, 4_096]) func smallBuffersWriteAndReadTheSameSnapshot(bufferSize: Int) throws {
        let table = filledTable(count: 2_000)
        let bytes = written(table, bufferSize: bufferSize)
        #expect(bytes.count > 50 * bufferSize)
        #expect(bytes == written(table, bufferSize: SavedIndex.defaultBufferSize))
        let (loaded, summary) = try read(bytes, bufferSize: bufferSize)
        let expectedTotal = (0..<2_000).reduce(0) { $0 + $1 * 1_001 }
        #expect(summary == SavedIndex.Loaded(redundantOpCount: 5, totalLength: expectedTotal))
        try loaded.expectSameEntries(as: table)
    }

    /// A flipped bit anywhere, or a cut anywhere, is refused, and leaves the table empty.
    @Test func damageAnywhereIsRefused() throws {
        let bytes = written(filledTable(count: 300), bufferSize: 600)
        for position in stride(from: 0, to: bytes.count, by: 211) {
            var damaged = bytes
            damaged[position] ^= 0x04
            let (table, loaded) = try read(damaged, bufferSize: 600)
            #expect(loaded == nil, "a bit flipped at \(position)")
            #expect(table.count == 0)
        }
        for cut in [1, 8, 9, bytes.count / 2, bytes.count - 20] {
            let (table, loaded) = try read(Array(bytes.dropLast(cut)), bufferSize: 600)
            #expect(loaded == nil, "\(cut) bytes cut")
            #expect(table.count == 0)
        }
    }
}

extension EntryTable {
    /// Expects a sound table with `other`'s keys in the same LRU order, each with its lengths
    /// and location.
    func expectSameEntries(as other: EntryTable, sourceLocation: SourceLocation = #_sourceLocation) throws {
        #expect(invariantViolation() == nil, sourceLocation: sourceLocation)
        #expect(
            indicesInLRUOrder.map { key(at: $0) } == other.indicesInLRUOrder.map { other.key(at: $0) },
            sourceLocation: sourceLocation)
        for index in other.indicesInLRUOrder {
            let mine = try #require(self.index(of: other.key(at: index)), sourceLocation: sourceLocation)
            #expect(self[mine].lengths == other[index].lengths, sourceLocation: sourceLocation)
            #expect(self[mine].location == other[index].location, sourceLocation: sourceLocation)
        }
    }
}
