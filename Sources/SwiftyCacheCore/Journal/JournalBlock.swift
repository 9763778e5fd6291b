/// A `BLOCK` line of a packed journal: the `CLEAN` records of up to ``maximumEntries`` (32) entries
/// in one line, in binary, which a rebuild of a packed journal writes instead of a text line
/// per entry (a `CLEAN` line of a 64-character key takes about 107 bytes; its record in a block,
/// about 43). It replays as those `CLEAN` lines would, in their order; lines after it change
/// its entries as usual. Only rebuilds write blocks, and only of committed entries; `DIRTY`
/// lines, `REMOVE` lines of undeleted files and keys a block cannot hold stay text, in their
/// place in the LRU order.
///
///     BLOCK <payload, escaped> ~<tag><sum>
///
/// The payload holds, per entry, eldest first (integers are unsigned LEB128 varints):
///
///     key               1 byte n, then the key: n in 1...127, n bytes of key;
///                       0x80 | n, n in 1...127: a key of 2n lower-case hexadecimal
///                       digits (the names `ObjectCache` gives), as n bytes
///     lengths           one varint per slot
///     segment, offset   the record's location, two varints
///
/// In the line, a `\n` byte of the payload is written `0x7F 0x01` and a `0x7F` byte
/// `0x7F 0x02`; nothing else is escaped (the line's end is its check, never a payload byte).
/// The check (``JournalLineCheck``) covers the whole line and carries the first key's tag: a
/// block that fails it, or whose payload does not decode whole, is a damaged line, and none of
/// its entries is loaded (their records become garbage for compaction; a miss, never a wrong
/// value).
///
/// - Complexity: O(entries) both ways; a decode allocates nothing once its buffers have grown.
enum JournalBlock {
    static let verb: [UInt8] = Array("BLOCK ".utf8)
    /// Entries per block: a damaged block costs at most this many. (A line's verb, check and
    /// newline, 25 bytes, add under a byte an entry.)
    static let maximumEntries = 32
    static let escape: UInt8 = 0x7F
    /// Slots past which entries stay `CLEAN` lines: with at most 64 slots, a block of 32
    /// entries, escaped, stays far inside the longest line the parser takes.
    static let maximumValueCount = 64
    /// Payload bytes after which a block is written out before it holds 32 entries.
    static let payloadLimit = 16 << 10

    /// Collects committed entries into blocks and appends each block's line when it is full or
    /// flushed.
    struct Encoder {
        let valueCount: Int
        private var payload: [UInt8] = []
        private var firstKey: [UInt8] = []
        private(set) var count = 0

        init(valueCount: Int) {
            self.valueCount = valueCount
            payload.reserveCapacity(maximumEntries * 48)
        }

        /// Whether `key` fits a block: 1 to 127 bytes, or 2 to 254 lower-case hex digits; and
        /// whether blocks hold the entries of this cache (at most ``maximumValueCount`` slots).
        func canHold(key: UnsafeBufferPointer<UInt8>) -> Bool {
            valueCount <= maximumValueCount && ((1...127).contains(key.count) || Self.isPackableHex(key))
        }

        /// Adds an entry (`canHold(key:)` must hold); appends the block to `buffer` once it is
        /// full.
        mutating func append(
            key: UnsafeBufferPointer<UInt8>, lengths: SlotLengths, location: ValueLocation, to buffer: inout [UInt8]
        ) {
            if count == 0 { firstKey = Array(key) }
            if Self.isPackableHex(key) {
                payload.append(0x80 | UInt8(truncatingIfNeeded: key.count / 2))
                var index = 0
                while index < key.count {
                    payload.append((HexDigits.value(key[index]) ?? 0) << 4 | (HexDigits.value(key[index + 1]) ?? 0))
                    index += 2
                }
            } else {
                payload.append(UInt8(truncatingIfNeeded: key.count))
                payload.append(contentsOf: key)
            }
            for length in lengths { LEB128.append(UInt64(max(0, length)), to: &payload) }
            LEB128.append(UInt64(location.segment), to: &payload)
            LEB128.append(UInt64(max(0, location.offset)), to: &payload)
            count += 1
            if count >= maximumEntries || payload.count >= payloadLimit { flush(to: &buffer) }
        }

        /// Appends the block collected so far as a line to `buffer`, if it holds any entry.
        mutating func flush(to buffer: inout [UInt8]) {
            guard count > 0 else { return }
            let start = buffer.count
            buffer.append(contentsOf: verb)
            for byte in payload {
                switch byte {
                case UInt8(ascii: "\n"):
                    buffer.append(escape)
                    buffer.append(0x01)
                case escape:
                    buffer.append(escape)
                    buffer.append(0x02)
                default: buffer.append(byte)
                }
            }
            firstKey.withUnsafeBufferPointer { JournalLineCheck.append(key: $0, lineStart: start, to: &buffer) }
            buffer.append(UInt8(ascii: "\n"))
            payload.removeAll(keepingCapacity: true)
            count = 0
        }

        static func isPackableHex(_ key: UnsafeBufferPointer<UInt8>) -> Bool {
            key.count >= 2 && key.count <= 254 && key.count % 2 == 0
                && key.allSatisfy { HexDigits.value($0) != nil }
        }
    }
}
