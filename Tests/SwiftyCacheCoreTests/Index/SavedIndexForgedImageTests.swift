import Foundation
import SwiftyCacheTestSupport
import Testing

@testable import SwiftyCacheCore

/// Images whose checksum holds but that no close of ours wrote: each is refused (the journal is
/// then replayed), never loaded into a table whose lookups would miss a key, find it twice, walk
/// without end or read outside its arrays.
@Suite struct SavedIndexForgedImageTests {
    let images = SavedIndexImageTests()

    /// An image's parts, found from its end, to change and seal again.
    struct Forgery {
        var bytes: [UInt8]
        let count: Int
        var bucketCount: Int { RecordBuckets.bucketCount(for: count) }
        var bucketsStart: Int { bytes.count - 8 - bucketCount * 8 }
        var entriesStart: Int { bucketsStart - count * SavedIndex.imageEntrySize }

        func bucket(_ index: Int) -> UInt64 { word(at: bucketsStart + index * 8) }
        mutating func setBucket(_ index: Int, _ value: UInt64) { setWord(value, at: bucketsStart + index * 8) }
        func entryWord(_ entry: Int, _ word: Int) -> UInt64 {
            self.word(at: entriesStart + entry * SavedIndex.imageEntrySize + word * 8)
        }
        mutating func setEntryWord(_ entry: Int, _ word: Int, _ value: UInt64) {
            setWord(value, at: entriesStart + entry * SavedIndex.imageEntrySize + word * 8)
        }
        func word(at offset: Int) -> UInt64 {
            bytes[offset..<(offset + 8)].reversed().reduce(0) { $0 << 8 | UInt64($1) }
        }
        mutating func setWord(_ value: UInt64, at offset: Int) {
            for index in 0..<8 { bytes[offset + index] = UInt8(truncatingIfNeeded: value >> (8 * UInt64(index))) }
        }
        /// The bytes with the checksum recomputed over the rest.
        var sealed: [UInt8] {
            var result = bytes
            let checksum = XXHash64.hash(Array(bytes.dropLast(8)))
            for index in 0..<8 {
                result[bytes.count - 8 + index] = UInt8(truncatingIfNeeded: checksum >> (8 * UInt64(index)))
            }
            return result
        }
        var occupied: [Int] { (0..<bucketCount).filter { bucket($0) != 0 } }
        var empty: [Int] { (0..<bucketCount).filter { bucket($0) == 0 } }
    }

    /// A table of 60 entries with no removal: entry `n` is at position `n`, its key
    /// `SavedIndexImageTests.key(n)`.
    func forgery() -> Forgery {
        var table = EntryTable()
        for number in 0..<60 {
            let index = table.insert(key: SavedIndexImageTests.key(number), valueCount: 2)
            table.setCommitted(
                index, lengths: [number, 1], location: ValueLocation(segment: 1, offset: Int64(number) * 50))
        }
        return Forgery(bytes: images.image(table, valueCount: 2, storesLocations: true), count: 60)
    }

    @Test func theHarnessSealsWhatLoads() throws {
        let forged = forgery()
        #expect(try images.read(forged.sealed)?.table.count == 60)
        var touched = forged
        touched.bytes[touched.bytes.count - 1] ^= 1
        #expect(try images.read(touched.bytes) == nil)
        #expect(try images.read(touched.sealed)?.table.count == 60)
    }

    @Test func aBucketNamingNoRecordIsRefused() throws {
        var forged = forgery()
        let bucket = try #require(forged.occupied.first)
        forged.setBucket(bucket, forged.bucket(bucket) & ~0xFFFF_FFFF | 61)
        #expect(try images.read(forged.sealed) == nil)
    }

    @Test func aWrongTagIsRefused() throws {
        var forged = forgery()
        let bucket = try #require(forged.occupied.first)
        forged.setBucket(bucket, forged.bucket(bucket) ^ 1 << 40)
        #expect(try images.read(forged.sealed) == nil)
    }

    @Test func aRecordInTwoBucketsIsRefused() throws {
        var forged = forgery()
        let (first, second) = (try #require(forged.occupied.first), try #require(forged.occupied.last))
        forged.setBucket(second, forged.bucket(first))
        #expect(try images.read(forged.sealed) == nil)
    }

    @Test func aBucketPastAnEmptyOneOfItsProbeIsRefused() throws {
        var forged = forgery()
        // Moved from where its probe finds it to an empty bucket with another empty one between.
        let empties = forged.empty
        let next = try #require(
            empties.indices.dropLast().first { empties[$0] > 0 && forged.bucket(empties[$0] - 1) != 0 })
        let bucket = empties[next] - 1
        forged.setBucket(empties[next + 1], forged.bucket(bucket))
        forged.setBucket(bucket, 0)
        #expect(try images.read(forged.sealed) == nil)
    }

    /// Entry 0's key is "k0", held inline as it is: a '/' in it would name a path.
    @Test func aKeyThatNamesAPathIsRefused() throws {
        var forged = forgery()
        forged.setEntryWord(0, 3, forged.entryWord(0, 3) & ~0xFF | UInt64(UInt8(ascii: "/")))
        #expect(try images.read(forged.sealed) == nil)
    }

    @Test func aKeyInTheWrongFormIsRefused() throws {
        var moved = forgery()
        // "k0" said to be in the arena, its bytes still inline.
        moved.setEntryWord(0, 0, moved.entryWord(0, 0) & ~(1 << 62))
        #expect(try images.read(moved.sealed) == nil)
        var padded = forgery()
        // Entry 2's key is 40 hexadecimal digits, 20 packed bytes: the 25th must be zero.
        padded.setEntryWord(2, 6, padded.entryWord(2, 6) | 1)
        #expect(try images.read(padded.sealed) == nil)
        var unknownBit = forgery()
        unknownBit.setEntryWord(0, 0, unknownBit.entryWord(0, 0) | 1 << 63)
        #expect(try images.read(unknownBit.sealed) == nil)
    }

    @Test func sizesThatDoNotAddUpAreRefused() throws {
        var longer = forgery()
        longer.bytes.insert(contentsOf: [UInt8](repeating: 0, count: 8), at: longer.bytes.count - 8)
        #expect(try images.read(longer.sealed) == nil)
        var shorter = forgery()
        shorter.bytes.removeSubrange((shorter.bytes.count - 16)..<(shorter.bytes.count - 8))
        #expect(try images.read(shorter.sealed) == nil)
    }

    /// Two entries with one key (a table our inserts cannot make: `insert` is only called for a
    /// key not in the table) are refused rather than loaded as a key found twice.
    @Test func aKeyTwiceIsRefused() throws {
        var table = EntryTable()
        for key in ["a", "b", "a", "c"] {
            let index = table.insert(key: key, valueCount: 2)
            table.setCommitted(index, lengths: [1, 1])
        }
        #expect(try images.read(images.image(table, valueCount: 2, storesLocations: true)) == nil)
    }

    /// Buckets more than three quarters full (a probe for an absent key could find no empty
    /// bucket), and probes longer than a table of its size makes, are refused before any walk.
    @Test func bucketsThatWouldMakeLookupsCrawlAreRefused() {
        #expect(RecordBuckets(adopting: [UInt64](repeating: 1 << 32 | 1, count: 8), count: 8) == nil)
        #expect(RecordBuckets(adopting: [UInt64](repeating: 0, count: 12), count: 0) == nil)
        var table = EntryTable()
        for number in 0..<3_000 { table.setCommitted(table.insert(key: "k\(number)", valueCount: 1), lengths: [1]) }
        let buckets = table.buckets
        let pairSum = (0..<3_000).reduce(UInt64(0)) { sum, record in
            sum &+ RecordBuckets.mixedPair(record: record, tag: table.withKey(at: record) { table.tag(of: $0) }, key: 7)
        }
        #expect(
            buckets.adoptionViolation(pairSum: pairSum, mixKey: 7, sameKey: { _, _ in false }, maximumSteps: 1 << 20)
                == nil)
        #expect(
            buckets.adoptionViolation(
                pairSum: pairSum &+ 1, mixKey: 7, sameKey: { _, _ in false }, maximumSteps: 1 << 20)
                != nil)
        #expect(
            buckets.adoptionViolation(pairSum: pairSum, mixKey: 7, sameKey: { _, _ in false }, maximumSteps: 10) != nil)
    }

    /// Random forgeries, sealed: a byte or a word changed anywhere, several at once. Each is
    /// refused, or loads into a sound table whose every key is found where its bucket says
    /// (a change in a length or a location is a valid image of other values); none traps or
    /// hangs.
    @Test func randomForgeriesAreRefusedOrSound() throws {
        let original = forgery()
        var generator = SystemRandomNumberGenerator()
        var refused = 0
        for round in 0..<1_500 {
            var forged = original
            for _ in 0...(round % 4) {
                let position = Int.random(in: 0..<(forged.bytes.count - 8), using: &generator)
                if round % 2 == 0 {
                    forged.bytes[position] ^= UInt8.random(in: 1...255, using: &generator)
                } else if position + 8 <= forged.bytes.count - 8 {
                    forged.setWord(UInt64.random(in: 0...UInt64.max, using: &generator), at: position)
                }
            }
            guard let (table, _) = try images.read(forged.sealed) else {
                refused += 1
                continue
            }
            #expect(table.invariantViolation() == nil, "round \(round)")
            for index in table.indicesInLRUOrder {
                #expect(table.index(of: table.key(at: index)) == index, "round \(round)")
            }
        }
        #expect(refused > 1_000)
    }
}
