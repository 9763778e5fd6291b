#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The layout of one record in a packed segment: an entry's slot lengths and the bytes of its
/// inline slots, under one checksum that also covers the key. All integers are little-endian.
///
///     offset     size        field
///     0          4           checksum: the low 32 bits of XXH64(lengths and values,
///                            seed: XXH64(key))
///     4          4 × slots   each slot's length; 0xFFFFFFFF for a slot kept in a file
///     4 + 4s     …           the inline slots' bytes, in slot order, back to back
///
/// A sample: key `k1`, two slots `abc` and `de`, 17 bytes:
///
///     d9 80 c5 59  03 00 00 00  02 00 00 00  61 62 63  64 65
///     └ checksum ┘ └ slot 0 ┘   └ slot 1 ┘   a  b  c   d  e
///
/// The key is not stored: the journal names it with the record's segment and offset, and a
/// record is only ever read at an offset the journal gave, with the key and lengths the
/// journal gave. Seeding the checksum with the key's hash makes the record valid only for
/// that key: bytes of another entry, a torn write or a flipped bit all fail the check. A
/// record is written with one `write` after everything it needs, and never changed.
enum PackedRecord {
    /// The marker of a slot whose value is a file (`key.N`), not inline.
    static let externalSlotMarker = UInt32.max

    /// Bytes before the values.
    static func headerSize(valueCount: Int) -> Int { 4 &+ 4 &* valueCount }

    /// Whether slot values of `length` bytes go to a file rather than into the record.
    @inline(__always)
    static func isExternal(length: Int, inlineLimit: Int) -> Bool { length > inlineLimit }

    /// The size of the record with `lengths`; `nil` when no slot is inline (no record).
    static func size(lengths: SlotLengths, inlineLimit: Int) -> Int? {
        var total = headerSize(valueCount: lengths.count)
        var hasInline = false
        for length in lengths where !isExternal(length: length, inlineLimit: inlineLimit) {
            hasInline = true
            total &+= length
        }
        return hasInline ? total : nil
    }

    /// The checksum of a record's bytes after the checksum field, for `key`.
    static func checksum(of body: UnsafeRawBufferPointer, key: String) -> UInt32 {
        checksum(of: body, keyHash: keyHash(key))
    }

    /// ``checksum(of:key:)`` given ``keyHash(_:)`` of the key.
    static func checksum(of body: UnsafeRawBufferPointer, keyHash: UInt64) -> UInt32 {
        UInt32(truncatingIfNeeded: XXHash64.hash(body, seed: keyHash))
    }

    /// XXH64 of the key's bytes (seed 0): the seed of its records' checksums, and the key's tag
    /// in journal lines (``JournalLineCheck/tag(of:)-(String)``, its low 32 bits).
    static func keyHash(_ key: String) -> UInt64 {
        return key.withUTF8Bytes { XXHash64.hash(UnsafeRawBufferPointer($0)) }
    }

    /// Builds the record of `key` with `lengths`; `inlineValue(slot)` gives each inline slot's
    /// bytes (exactly `lengths[slot]` of them). Returns `nil` when no slot is inline or a
    /// value has the wrong length.
    ///
    /// - Complexity: O(record size): one allocation and one copy of each value.
    static func encode(
        key: String, lengths: SlotLengths, inlineLimit: Int,
        inlineValue: (Int) throws(CacheError) -> [UInt8]
    ) throws(CacheError) -> [UInt8]? {
        try encode(key: key, lengths: lengths, inlineLimit: inlineLimit) { (slot, record) throws(CacheError) in
            record.append(contentsOf: try inlineValue(slot))
        }
    }

    /// The record of `key` with inline `values`, copied straight from each `Data` into the
    /// record; `nil` when a value is too large to be inline.
    ///
    /// - Complexity: O(record size): one allocation, one copy of each value.
    static func encode(key: String, values: [Data], inlineLimit: Int) -> [UInt8]? {
        var record: [UInt8] = []
        return append(key: key, values: values, inlineLimit: inlineLimit, to: &record) ? record : nil
    }

    /// Appends the record of `key` with inline `values` to `buffer`, which may hold other
    /// records before it (a batch's, built into one buffer); returns `false`, with `buffer` as
    /// it was, when a value is too large to be inline.
    ///
    /// - Complexity: O(record size): one copy of each value.
    static func append(key: String, values: [Data], inlineLimit: Int, to buffer: inout [UInt8]) -> Bool {
        guard !values.contains(where: { isExternal(length: $0.count, inlineLimit: inlineLimit) }) else { return false }
        return
            (try? append(
                key: key, lengths: SlotLengths(values.lazy.map(\.count)), inlineLimit: inlineLimit, to: &buffer
            ) {
                (slot, record) throws(CacheError) in
                values[slot].withUnsafeBytes { record.append(contentsOf: $0.assumingMemoryBound(to: UInt8.self)) }
            }) ?? false
    }

    /// ``encode(key:lengths:inlineLimit:inlineValue:)`` with each inline slot's bytes appended
    /// to the record by `appendValue(slot, &record)`.
    static func encode(
        key: String, lengths: SlotLengths, inlineLimit: Int,
        appendValue: (Int, inout [UInt8]) throws(CacheError) -> Void
    ) throws(CacheError) -> [UInt8]? {
        var record: [UInt8] = []
        return try append(key: key, lengths: lengths, inlineLimit: inlineLimit, to: &record, appendValue: appendValue)
            ? record : nil
    }

    /// Appends the record of `key` with `lengths` to `buffer`, each inline slot's bytes appended
    /// by `appendValue(slot, &buffer)`; returns `false`, with `buffer` as it was, when no slot is
    /// inline or a value has the wrong length.
    static func append(
        key: String, lengths: SlotLengths, inlineLimit: Int, to buffer: inout [UInt8],
        appendValue: (Int, inout [UInt8]) throws(CacheError) -> Void
    ) throws(CacheError) -> Bool {
        guard let size = size(lengths: lengths, inlineLimit: inlineLimit) else { return false }
        let start = buffer.count
        // A record alone gets exactly its room; a batch's buffer grows as an array does (room
        // reserved for each record would copy the buffer every time).
        if start == 0 { buffer.reserveCapacity(size) }
        buffer.append(contentsOf: [0, 0, 0, 0])
        for length in lengths {
            let field =
                isExternal(length: length, inlineLimit: inlineLimit)
                ? externalSlotMarker : UInt32(truncatingIfNeeded: length)
            appendLittleEndian(field, to: &buffer)
        }
        for slot in lengths.indices where !isExternal(length: lengths[slot], inlineLimit: inlineLimit) {
            let slotStart = buffer.count
            do {
                try appendValue(slot, &buffer)
            } catch {
                buffer.removeSubrange(start...)
                throw error
            }
            guard buffer.count - slotStart == lengths[slot] else {
                buffer.removeSubrange(start...)
                return false
            }
        }
        let sum = buffer.withUnsafeBytes {
            Self.checksum(of: UnsafeRawBufferPointer(rebasing: $0[(start + 4)...]), key: key)
        }
        buffer.withUnsafeMutableBytes { $0.storeBytes(of: sum.littleEndian, toByteOffset: start, as: UInt32.self) }
        return true
    }

    /// Makes the bytes `buffer[start..<end]` a record of `key` with `lengths`: room for the
    /// header (``headerSize(valueCount:)`` bytes at `start`, written by whoever laid the slots
    /// after it) gets the lengths and the checksum. Returns `false`, changing nothing, unless
    /// every slot is inline and the slots fill the rest exactly; otherwise ``keyHash(_:)``,
    /// which a journal line of the key can reuse as its tag.
    ///
    /// - Complexity: O(record size), for the checksum.
    static func seal(
        _ buffer: inout [UInt8], start: Int, end: Int, key: String, lengths: SlotLengths, inlineLimit: Int
    ) -> UInt64? {
        guard start >= 0, start <= end, end <= buffer.count,
            !lengths.contains(where: { isExternal(length: $0, inlineLimit: inlineLimit) }),
            size(lengths: lengths, inlineLimit: inlineLimit) == end - start
        else { return nil }
        let keyHash = keyHash(key)
        buffer.withUnsafeMutableBytes { bytes in
            for (slot, length) in lengths.enumerated() {
                bytes.storeBytes(
                    of: UInt32(truncatingIfNeeded: length).littleEndian, toByteOffset: start + 4 + 4 * slot,
                    as: UInt32.self)
            }
            let sum = checksum(of: UnsafeRawBufferPointer(rebasing: bytes[(start + 4)..<end]), keyHash: keyHash)
            bytes.storeBytes(of: sum.littleEndian, toByteOffset: start, as: UInt32.self)
        }
        return keyHash
    }

    /// Checks a record read back: its checksum for `key`, and its lengths. Returns where each
    /// inline slot's bytes start in `record` (`-1` for a file slot), or `nil` when anything
    /// differs: a torn write, a flipped bit, or bytes that are not this entry's record.
    ///
    /// - Complexity: O(record size), for the checksum.
    static func validate(_ record: UnsafeRawBufferPointer, key: String, lengths: SlotLengths, inlineLimit: Int)
        -> SlotLengths?
    {
        guard let expected = size(lengths: lengths, inlineLimit: inlineLimit), record.count == expected else {
            return nil
        }
        let stored = UInt32(littleEndian: record.loadUnaligned(fromByteOffset: 0, as: UInt32.self))
        guard stored == checksum(of: UnsafeRawBufferPointer(rebasing: record[4...]), key: key) else { return nil }
        var offsets = SlotLengths(repeating: -1, count: lengths.count)
        var cursor = headerSize(valueCount: lengths.count)
        for slot in lengths.indices {
            let field = UInt32(littleEndian: record.loadUnaligned(fromByteOffset: 4 + 4 * slot, as: UInt32.self))
            if isExternal(length: lengths[slot], inlineLimit: inlineLimit) {
                guard field == externalSlotMarker else { return nil }
            } else {
                guard Int(field) == lengths[slot] else { return nil }
                offsets[slot] = cursor
                cursor += lengths[slot]
            }
        }
        return offsets
    }

    private static func appendLittleEndian(_ value: UInt32, to buffer: inout [UInt8]) {
        buffer.append(UInt8(truncatingIfNeeded: value))
        buffer.append(UInt8(truncatingIfNeeded: value >> 8))
        buffer.append(UInt8(truncatingIfNeeded: value >> 16))
        buffer.append(UInt8(truncatingIfNeeded: value >> 24))
    }
}
