/// A key held in its ``EntryRecord`` instead of the ``KeyArena``: up to 32 bytes as they are, or
/// 34 to 64 lower-case hexadecimal digits (the names `ObjectCache` gives its entries are 64)
/// packed two to a byte. A lookup of such a key reads the bucket and then the record, whose key
/// is in it: one cache miss fewer than a key in the arena, which on an index of gigabytes is a
/// third of a lookup. Longer keys, and keys of 33 to 64 bytes that are not lower-case
/// hexadecimal, stay in the arena.
///
/// The form follows from the key alone (its length, then its bytes), so that two equal keys are
/// always held alike, and keys of one length alike but for hexadecimal ones: a key is equal to a
/// record's inline key when their lengths, forms and 32 bytes are.
///
/// - Complexity: Packing and unpacking are O(key), at most 64 bytes.
struct InlineKey: Equatable {
    /// The key's bytes, or its packed digits, zero-padded to 32 bytes.
    private(set) var words: (UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0)
    /// Whether the bytes are hexadecimal digits packed two to a byte.
    let isPackedHex: Bool

    /// The longest key held as it is.
    static let maximumRawLength = 32
    /// The longest key held as packed digits.
    static let maximumHexLength = 64

    /// The inline form of `key`; `nil` for a key that goes to the arena.
    init?(_ key: UnsafeBufferPointer<UInt8>) {
        guard let base = key.baseAddress else {
            isPackedHex = false
            return
        }
        if key.count <= Self.maximumRawLength {
            isPackedHex = false
            withUnsafeMutableBytes(of: &words) { $0.copyMemory(from: UnsafeRawBufferPointer(key)) }
            return
        }
        guard key.count <= Self.maximumHexLength, key.count % 2 == 0 else { return nil }
        isPackedHex = true
        let packed: Bool = withUnsafeMutableBytes(of: &words) { words in
            let text = UnsafeRawPointer(base)
            var valid = true
            var index = 0
            // Eight digits at a time (see `HexDigits.packEight`), the rest two at a time.
            while key.count &- index >= 8 {
                let (bytes, isHex) = HexDigits.packEight(text.loadUnaligned(fromByteOffset: index, as: UInt64.self))
                valid = valid && isHex
                words.storeBytes(of: bytes.littleEndian, toByteOffset: index >> 1, as: UInt32.self)
                index &+= 8
            }
            while index < key.count {
                guard let high = HexDigits.value(key[index]), let low = HexDigits.value(key[index &+ 1]) else {
                    return false
                }
                words[index >> 1] = high << 4 | low
                index &+= 2
            }
            return valid
        }
        guard packed else { return nil }
    }

    init(words: (UInt64, UInt64, UInt64, UInt64), isPackedHex: Bool) {
        self.words = words
        self.isPackedHex = isPackedHex
    }

    static func == (left: InlineKey, right: InlineKey) -> Bool {
        left.isPackedHex == right.isPackedHex && left.words.0 == right.words.0 && left.words.1 == right.words.1
            && left.words.2 == right.words.2 && left.words.3 == right.words.3
    }

    /// Calls `body` with the key's `length` bytes (hexadecimal digits unpacked), on the stack.
    func withKey<Result>(length: Int, _ body: (UnsafeBufferPointer<UInt8>) -> Result) -> Result {
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: Self.maximumHexLength) { text in
            withUnsafeBytes(of: words) { packed in
                let count = min(length, isPackedHex ? Self.maximumHexLength : Self.maximumRawLength)
                if isPackedHex {
                    // Eight digits at a time (see `HexDigits.unpackFour`), the rest two at a time.
                    let raw = UnsafeMutableRawBufferPointer(text)
                    var index = 0
                    while count / 2 &- index >= 4 {
                        let four = UInt32(littleEndian: packed.loadUnaligned(fromByteOffset: index, as: UInt32.self))
                        raw.storeBytes(
                            of: HexDigits.unpackFour(four).littleEndian, toByteOffset: 2 &* index, as: UInt64.self)
                        index &+= 4
                    }
                    while index < count / 2 {
                        text[2 &* index] = HexDigits.digit(packed[index] >> 4)
                        text[2 &* index &+ 1] = HexDigits.digit(packed[index] & 0x0F)
                        index &+= 1
                    }
                } else {
                    for index in 0..<count { text[index] = packed[index] }
                }
                return body(UnsafeBufferPointer(rebasing: text[0..<count]))
            }
        }
    }
}
