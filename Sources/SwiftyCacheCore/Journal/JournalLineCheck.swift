/// The check every line of a packed journal that changes an entry ends with (`READ` lines,
/// which only order entries, have none), so that damage to one line costs the entry it
/// names, not the cache: ` ~`, then 16 lower-case hex digits, the key's tag and the
/// line's checksum (the low 32 bits of XXH64, of the key's bytes and of the line's bytes before
/// ` ~`):
///
///     CLEAN 3400330d1dfc7f3f 832 21054 1 16 ~5e1c0a3b9d27f4c1
///           └ key ┘                           └ tag ──┘└ sum ──┘
///
/// A line whose checksum fails is skipped, and the entries it may name are dropped after the
/// replay (a miss, never an older value): its key when it still reads as one, and any key
/// whose tag the line carries, in case the damage hit the key itself (see
/// `CacheState.dropEntriesNamedBy(damagedLines:)`). Journals of earlier releases have no
/// check: their lines are read with the old rules until the first checked line, after which a
/// line without a valid check is damage.
enum JournalLineCheck {
    /// The bytes ` ~` that start the check.
    static let marker: (UInt8, UInt8) = (UInt8(ascii: " "), UInt8(ascii: "~"))
    /// ` ~` and 16 hex digits.
    static let length = 18

    /// The tag of a key: the low 32 bits of its XXH64.
    static func tag(of key: UnsafeRawBufferPointer) -> UInt32 {
        UInt32(truncatingIfNeeded: XXHash64.hash(key))
    }

    static func tag(of key: String) -> UInt32 {
        return key.withUTF8Bytes { tag(of: UnsafeRawBufferPointer($0)) }
    }

    /// The checksum of a line's bytes before its check.
    static func sum(of line: UnsafeRawBufferPointer) -> UInt32 {
        UInt32(truncatingIfNeeded: XXHash64.hash(line, seed: 0x6A6F_7572_6E61_6C21))
    }

    /// Appends the check of the line that starts at `lineStart` in `buffer` (without its
    /// newline) and names `key`.
    ///
    /// - Complexity: O(line length), one hash of the key and one of the line.
    static func append(key: UnsafeBufferPointer<UInt8>, lineStart: Int, to buffer: inout [UInt8]) {
        let sum = buffer.withUnsafeBytes { bytes in Self.sum(of: UnsafeRawBufferPointer(rebasing: bytes[lineStart...]))
        }
        buffer.append(marker.0)
        buffer.append(marker.1)
        let tag = tag(of: UnsafeRawBufferPointer(key))
        withUnsafeBytes(of: hexText(tag).littleEndian) { buffer.append(contentsOf: $0) }
        withUnsafeBytes(of: hexText(sum).littleEndian) { buffer.append(contentsOf: $0) }
    }

    /// Writes the check of the line `line` holds so far, which names `key`, whose tag is `tag`
    /// when the caller knows it.
    static func write(key: UnsafeBufferPointer<UInt8>, tag: UInt32? = nil, to line: inout JournalLineWriter) {
        let sum = Self.sum(of: UnsafeRawBufferPointer(line.written))
        line.write(marker.0)
        line.write(marker.1)
        line.writeHex(tag ?? Self.tag(of: UnsafeRawBufferPointer(key)))
        line.writeHex(sum)
    }

    /// What a line's end says: `nil` when it carries no check; otherwise the line without it,
    /// the tag, and whether the checksum holds.
    static func split(_ line: Slice<UnsafeBufferPointer<UInt8>>) -> (
        body: Slice<UnsafeBufferPointer<UInt8>>, tag: UInt32, isIntact: Bool
    )? {
        guard line.count > length else { return nil }
        let start = line.endIndex - length
        guard line[start] == marker.0, line[start + 1] == marker.1,
            let tag = parseHex(line[(start + 2)..<(start + 10)]),
            let sum = parseHex(line[(start + 10)..<line.endIndex])
        else { return nil }
        let body = line[line.startIndex..<start]
        return (body, tag, self.sum(of: UnsafeRawBufferPointer(UnsafeBufferPointer(rebasing: body))) == sum)
    }

    /// Every tag a damaged line may carry: eight hex digits after each `~` in it.
    static func tags(in line: [UInt8]) -> [UInt32] {
        line.withUnsafeBufferPointer { buffer in
            var tags: [UInt32] = []
            var index = buffer.startIndex
            while let tilde = buffer[index...].firstIndex(of: marker.1) {
                if tilde + 9 <= buffer.endIndex, let tag = parseHex(buffer[(tilde + 1)..<(tilde + 9)]) {
                    tags.append(tag)
                }
                index = tilde + 1
            }
            return tags
        }
    }

    /// The eight lower-case hexadecimal digits of `value`, as the bytes of a word in memory
    /// order (first digit lowest, as `littleEndian` stores them).
    static func hexText(_ value: UInt32) -> UInt64 {
        // Packed bytes hold the first two digits in their lowest byte: big-endian order.
        HexDigits.unpackFour(value.byteSwapped)
    }

    /// The value of eight lower-case hexadecimal digits, all at once (``HexDigits/packEight(_:)``).
    private static func parseHex(_ digits: Slice<UnsafeBufferPointer<UInt8>>) -> UInt32? {
        guard digits.count == 8, let base = digits.base.baseAddress else { return nil }
        let text = UnsafeRawPointer(base + digits.startIndex).loadUnaligned(as: UInt64.self)
        let (packed, isHex) = HexDigits.packEight(UInt64(littleEndian: text))
        // The first pair of digits is the packed value's lowest byte and the number's highest.
        return isHex ? packed.byteSwapped : nil
    }
}
