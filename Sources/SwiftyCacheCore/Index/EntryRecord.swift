/// One entry of the index as ``EntryTable`` stores it: 72 bytes of plain integers, with no
/// reference and no allocation of its own, so that ten million entries are a few arrays' worth
/// of memory rather than ten million objects.
///
///     bytes   field
///     0–7     the key: its length (bits 40–60), whether it is inline (bit 62) and packed
///             hexadecimal (bit 61), else its offset in the ``KeyArena`` (low 40 bits)
///     8–15    the sequence number (low 56 bits) and the flags (high 8)
///     16–23   the LRU links: the previous and next record, `UInt32.max` for none
///     24–31   the two slot lengths, when they fit (else ``Flags/spilledLengths``)
///     32–39   the packed record's segment and offset, when it fits (else ``Flags/spilledOffset``)
///     40–71   the key, when it is inline (``InlineKey``): a lookup of it reads no arena
///
/// A free record keeps the next free record's index in `next`. The editor's identifier, the
/// lengths of entries with more than two slots or a slot of 4 GiB and more, and offsets past
/// 4 GiB live in small side tables of ``EntryTable``, keyed by the record's index: entries being
/// edited are few, and the others are rare.
struct EntryRecord {
    var keyWord: UInt64 = 0
    var stateWord: UInt64 = 0
    var previous = EntryRecord.none
    var next = EntryRecord.none
    var length0: UInt32 = 0
    var length1: UInt32 = 0
    var segment: UInt32 = 0
    var offset: UInt32 = 0
    var inlineKeyWords: (UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0)

    /// The link to no record.
    static let none = UInt32.max
    /// Sequence numbers keep their low 56 bits (seventy quadrillion commits).
    static let sequenceMask: UInt64 = (1 << 56) - 1
    static let keyOffsetMask: UInt64 = (1 << 40) - 1
    /// The arena may hold a terabyte of keys.
    static let maximumKeyOffset = Int(keyOffsetMask)

    struct Flags: OptionSet {
        let rawValue: UInt8
        /// The record holds an entry (not in the free list).
        static let live = Flags(rawValue: 1)
        static let readable = Flags(rawValue: 2)
        static let dirtyJournaled = Flags(rawValue: 4)
        /// An editor holds the entry; its identifier is in the table's `editors`.
        static let editing = Flags(rawValue: 8)
        /// The lengths are in the table's `spilledLengths`.
        static let spilledLengths = Flags(rawValue: 16)
        /// The offset is in the table's `spilledOffsets`.
        static let spilledOffset = Flags(rawValue: 32)
        /// The number of inline lengths (0, 1 or 2) is `rawValue >> 6`.
        static let countShift: UInt8 = 6
    }

    private static let keyLengthMask: UInt64 = (1 << 21) - 1
    private static let inlineKeyBit: UInt64 = 1 << 62
    private static let packedHexBit: UInt64 = 1 << 61

    /// The key's offset in the arena (meaningless for an inline key).
    var keyOffset: Int { Int(truncatingIfNeeded: keyWord & Self.keyOffsetMask) }
    var keyLength: Int { Int(truncatingIfNeeded: keyWord >> 40 & Self.keyLengthMask) }
    var hasInlineKey: Bool { keyWord & Self.inlineKeyBit != 0 }

    /// The key held in the record (requires ``hasInlineKey``).
    var inlineKey: InlineKey {
        InlineKey(words: inlineKeyWords, isPackedHex: keyWord & Self.packedHexBit != 0)
    }

    /// A key in the arena, at `offset`, of `length` bytes (below 2²¹).
    mutating func setKey(offset: Int, length: Int) {
        keyWord =
            UInt64(truncatingIfNeeded: offset) & Self.keyOffsetMask
            | (UInt64(truncatingIfNeeded: length) & Self.keyLengthMask) << 40
        inlineKeyWords = (0, 0, 0, 0)
    }

    /// A key held in the record, of `length` bytes.
    mutating func setKey(_ key: InlineKey, length: Int) {
        keyWord =
            (UInt64(truncatingIfNeeded: length) & Self.keyLengthMask) << 40 | Self.inlineKeyBit
            | (key.isPackedHex ? Self.packedHexBit : 0)
        inlineKeyWords = key.words
    }

    var flags: Flags {
        get { Flags(rawValue: UInt8(truncatingIfNeeded: stateWord >> 56)) }
        set { stateWord = stateWord & Self.sequenceMask | UInt64(newValue.rawValue) << 56 }
    }

    var sequenceNumber: UInt64 {
        get { stateWord & Self.sequenceMask }
        set { stateWord = stateWord & ~Self.sequenceMask | newValue & Self.sequenceMask }
    }

    var isLive: Bool { flags.contains(.live) }
    var isReadable: Bool { flags.contains(.readable) }
    var isEditing: Bool { flags.contains(.editing) }

    /// The number of lengths held inline.
    var inlineCount: Int { Int(flags.rawValue >> Flags.countShift) }

    /// Stores `lengths` inline if they fit (at most two, each below 4 GiB); returns `false`,
    /// leaving the record's lengths alone, if they do not.
    mutating func setInlineLengths(_ lengths: SlotLengths) -> Bool {
        guard lengths.count <= 2 else { return false }
        var first: UInt32 = 0
        var second: UInt32 = 0
        if lengths.count > 0 {
            guard let value = UInt32(exactly: lengths[0]) else { return false }
            first = value
        }
        if lengths.count > 1 {
            guard let value = UInt32(exactly: lengths[1]) else { return false }
            second = value
        }
        length0 = first
        length1 = second
        let kept = flags.rawValue & ((1 << Flags.countShift) - 1) & ~Flags.spilledLengths.rawValue
        flags = Flags(rawValue: kept | UInt8(lengths.count) << Flags.countShift)
        return true
    }

    /// The inline lengths (requires ``Flags/spilledLengths`` unset).
    var inlineLengths: SlotLengths {
        SlotLengths(inline: Int(length0), Int(length1), count: inlineCount)
    }
}
