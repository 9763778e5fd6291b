/// The layout of one record in a packed segment: an entry's key, its slot lengths and the
/// bytes of its inline slots, under one checksum. All integers are little-endian.
///
///     offset     size        field
///     0          4           CRC-32C of every byte after this field
///     4          1           key length k, 1…255
///     5          4 × slots   each slot's length; 0xFFFFFFFF for a slot kept in a file
///     5 + 4s     k           the key, ASCII
///     9 + 4s…    …           the inline slots' bytes, in slot order, back to back
///
/// A sample: key `k1`, two slots `abc` and `de`, 20 bytes:
///
///     53 88 36 ba  02  03 00 00 00  02 00 00 00  6b 31  61 62 63  64 65
///     └── crc ──┘  k   └ slot 0 ┘   └ slot 1 ┘   k  1   a  b  c   d  e
///
/// A record is written with one `write` after everything it needs, and never changed; the
/// journal's `CLEAN` line names its segment and offset. A record is only ever read at an offset
/// the journal gave, with the key and lengths the journal gave, so a record is valid when its
/// checksum matches *and* it names that key and those lengths.
enum PackedRecord {
    /// The marker of a slot whose value is a file (`key.N`), not inline.
    static let externalSlotMarker = UInt32.max

    /// Bytes before the key.
    static func headerSize(valueCount: Int) -> Int { 5 &+ 4 &* valueCount }

    /// Whether slot values of `length` bytes go to a file rather than into the record.
    @inline(__always)
    static func isExternal(length: Int, inlineLimit: Int) -> Bool { length > inlineLimit }

    /// The size of the record of `key` with `lengths`; `nil` when no slot is inline (no record)
    /// or the key cannot be stored (longer than 255 bytes).
    static func size(keyLength: Int, lengths: [Int], inlineLimit: Int) -> Int? {
        guard (1...255).contains(keyLength) else { return nil }
        var total = headerSize(valueCount: lengths.count) &+ keyLength
        var hasInline = false
        for length in lengths where !isExternal(length: length, inlineLimit: inlineLimit) {
            hasInline = true
            total &+= length
        }
        return hasInline ? total : nil
    }

    /// Builds the record of `key` with `lengths`; `inlineValue(slot)` gives each inline slot's
    /// bytes (exactly `lengths[slot]` of them). Returns `nil` if a value has the wrong length.
    ///
    /// - Complexity: O(record size): one allocation and one copy of each value.
    static func encode(
        key: String, lengths: [Int], inlineLimit: Int,
        inlineValue: (Int) throws(CacheError) -> [UInt8]
    ) throws(CacheError) -> [UInt8]? {
        var key = key
        let keyBytes = key.withUTF8 { Array($0) }
        guard let size = size(keyLength: keyBytes.count, lengths: lengths, inlineLimit: inlineLimit) else {
            return nil
        }
        var record = [UInt8]()
        record.reserveCapacity(size)
        record.append(contentsOf: [0, 0, 0, 0, UInt8(truncatingIfNeeded: keyBytes.count)])
        for length in lengths {
            let field =
                isExternal(length: length, inlineLimit: inlineLimit)
                ? externalSlotMarker : UInt32(truncatingIfNeeded: length)
            appendLittleEndian(field, to: &record)
        }
        record.append(contentsOf: keyBytes)
        for slot in lengths.indices where !isExternal(length: lengths[slot], inlineLimit: inlineLimit) {
            let value = try inlineValue(slot)
            guard value.count == lengths[slot] else { return nil }
            record.append(contentsOf: value)
        }
        let crc = record.withUnsafeBytes { CRC32C.checksum(UnsafeRawBufferPointer(rebasing: $0[4...])) }
        record.withUnsafeMutableBytes { $0.storeBytes(of: crc.littleEndian, toByteOffset: 0, as: UInt32.self) }
        return record
    }

    /// Checks a record read back: its checksum, key and lengths. Returns where each inline
    /// slot's bytes start in `record` (`-1` for a file slot), or `nil` when anything differs:
    /// a torn write, a flipped bit, or bytes that are not this entry's record.
    ///
    /// - Complexity: O(record size), for the checksum.
    static func validate(
        _ record: UnsafeRawBufferPointer, key: String, lengths: [Int], inlineLimit: Int
    ) -> [Int]? {
        var key = key
        let header = headerSize(valueCount: lengths.count)
        return key.withUTF8 { keyBytes -> [Int]? in
            guard let expected = size(keyLength: keyBytes.count, lengths: lengths, inlineLimit: inlineLimit),
                record.count == expected
            else { return nil }
            let stored = UInt32(littleEndian: record.loadUnaligned(fromByteOffset: 0, as: UInt32.self))
            guard stored == CRC32C.checksum(UnsafeRawBufferPointer(rebasing: record[4...])),
                Int(record[4]) == keyBytes.count,
                UnsafeRawBufferPointer(rebasing: record[header..<(header + keyBytes.count)])
                    .elementsEqual(UnsafeRawBufferPointer(keyBytes))
            else { return nil }
            var offsets = [Int](repeating: -1, count: lengths.count)
            var cursor = header + keyBytes.count
            for slot in lengths.indices {
                let field = UInt32(littleEndian: record.loadUnaligned(fromByteOffset: 5 + 4 * slot, as: UInt32.self))
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
    }

    private static func appendLittleEndian(_ value: UInt32, to buffer: inout [UInt8]) {
        buffer.append(UInt8(truncatingIfNeeded: value))
        buffer.append(UInt8(truncatingIfNeeded: value >> 8))
        buffer.append(UInt8(truncatingIfNeeded: value >> 16))
        buffer.append(UInt8(truncatingIfNeeded: value >> 24))
    }
}
