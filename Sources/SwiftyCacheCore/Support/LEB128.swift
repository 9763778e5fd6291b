/// Unsigned LEB128 varints, the integers of the saved index and of journal blocks: seven
/// bits a byte, least significant first, the top bit set on every byte but the last.
enum LEB128 {
    /// Reads the varint at `position` in `bytes` and moves `position` past it; `nil` when the
    /// bytes end first or it is longer than ten bytes.
    ///
    /// - Complexity: O(1): at most ten bytes.
    @inline(__always)
    static func read(_ bytes: UnsafeRawBufferPointer, at position: inout Int) -> UInt64? {
        // One byte: every length below 128, the common case.
        if position < bytes.count {
            let first = bytes[position]
            if first & 0x80 == 0 {
                position &+= 1
                return UInt64(first)
            }
        }
        var value: UInt64 = 0
        var shift: UInt64 = 0
        while position < bytes.count {
            let byte = bytes[position]
            position &+= 1
            guard shift < 64 else { return nil }
            value |= UInt64(byte & 0x7F) << shift
            if byte & 0x80 == 0 { return value }
            shift += 7
        }
        return nil
    }

    /// Appends `value` to `bytes` as a varint.
    ///
    /// - Complexity: O(1): at most ten bytes.
    static func append(_ value: UInt64, to bytes: inout [UInt8]) {
        var value = value
        while value >= 0x80 {
            bytes.append(UInt8(truncatingIfNeeded: value) | 0x80)
            value >>= 7
        }
        bytes.append(UInt8(value))
    }
}
