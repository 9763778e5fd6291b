/// Lower-case hexadecimal digits, the names `ObjectCache` gives its entries: read, spelled and
/// packed two to a byte, for the keys the index holds in its records (``InlineKey``) and those a
/// journal block writes as bytes (``JournalBlock``).
package enum HexDigits {
    /// The value of a lower-case hexadecimal digit; `nil` for any other byte.
    @inline(__always)
    static func value(_ byte: UInt8) -> UInt8? {
        if byte &- 0x30 < 10 { return byte &- 0x30 }
        if byte &- 0x61 < 6 { return byte &- 0x61 &+ 10 }
        return nil
    }

    /// The lower-case digit of `value` (below 16).
    @inline(__always)
    static func digit(_ value: UInt8) -> UInt8 { value < 10 ? 0x30 &+ value : 0x57 &+ value }

    /// Packs eight ASCII hexadecimal digits (read little-endian, the first digit in the low
    /// byte) into four bytes, the first digit in the high half of the first byte; and whether
    /// all eight are lower-case hexadecimal digits. Branch-free, a byte per lane.
    @inline(__always)
    static func packEight(_ text: UInt64) -> (UInt32, Bool) {
        let lanes: UInt64 = 0x0101_0101_0101_0101
        let high: UInt64 = 0x8080_8080_8080_8080
        let lowNibbles: UInt64 = 0x0F0F_0F0F_0F0F_0F0F
        let letterBits: UInt64 = 0x4040_4040_4040_4040
        // For bytes below 0x80, adding 0x80 - c sets the lane's high bit exactly when byte >= c.
        @inline(__always) func atLeast(_ c: UInt64) -> UInt64 { (text & ~high) &+ (lanes &* (0x80 &- c)) }
        let isDigit = atLeast(0x30) & ~atLeast(0x3A)
        let isLetter = atLeast(0x61) & ~atLeast(0x67)
        let valid = ((isDigit | isLetter) & ~text & high) == high
        // '0'–'9' are 0x30–0x39 and 'a'–'f' 0x61–0x66: the low nibble, plus 9 for a letter.
        let nibbles = (text & lowNibbles) &+ ((text & letterBits) >> 6) &* 9
        // Each 16-bit lane: its first digit shifted up beside the second.
        var pairs = ((nibbles & 0x000F_000F_000F_000F) << 4) | ((nibbles >> 8) & 0x000F_000F_000F_000F)
        pairs = (pairs | (pairs >> 8)) & 0x0000_FFFF_0000_FFFF
        pairs = (pairs | (pairs >> 16)) & 0x0000_0000_FFFF_FFFF
        return (UInt32(truncatingIfNeeded: pairs), valid)
    }

    /// The sixteen lower-case digits of `value`, most significant first, as two words to be
    /// stored little-endian one after the other. Branch-free.
    @inline(__always)
    package static func digits(of value: UInt64) -> (UInt64, UInt64) {
        // Packed bytes hold the first two digits in their first (lowest) byte: the big-endian
        // order of each half.
        (
            unpackFour(UInt32(truncatingIfNeeded: value >> 32).byteSwapped),
            unpackFour(UInt32(truncatingIfNeeded: value).byteSwapped)
        )
    }

    /// The eight lower-case digits of four packed bytes (``packEight(_:)`` undone): the first
    /// digit in the low byte of the result, to be stored little-endian. Branch-free.
    @inline(__always)
    static func unpackFour(_ packed: UInt32) -> UInt64 {
        // Each byte to a 16-bit lane, then its high nibble to the lane's low byte and its low
        // nibble to the high one: eight nibbles, a byte each, in digit order.
        var lanes = UInt64(packed)
        lanes = (lanes | lanes << 16) & 0x0000_FFFF_0000_FFFF
        lanes = (lanes | lanes << 8) & 0x00FF_00FF_00FF_00FF
        lanes = (lanes >> 4 & 0x000F_000F_000F_000F) | (lanes & 0x000F_000F_000F_000F) << 8
        // '0' + v, and 0x27 more for v of 10 and above ('a' is 0x61, 0x30 + 10 + 0x27).
        let isLetter = ((lanes &+ 0x0606_0606_0606_0606) >> 4) & 0x0101_0101_0101_0101
        return lanes &+ 0x3030_3030_3030_3030 &+ isLetter &* 0x27
    }
}
