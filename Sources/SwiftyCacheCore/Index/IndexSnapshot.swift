/// The index as `close()` left it, so that the next open loads it instead of replaying the
/// journal: the journal stays the source of truth (and the Java format), the snapshot only a
/// shortcut to the state it describes.
///
/// It follows the clean marker's line in `journal.clean` (see ``CacheDirectory``), so it is
/// used only when the marker vouches for the journal as it is: a journal that another writer
/// (the Java library) or a crashed session changed since makes both void, and the journal is
/// replayed. Opening deletes the marker, snapshot included, before anything else. Integers are
/// unsigned LEB128 varints unless said otherwise:
///
///     "SCIDX001"                    magic, 8 bytes
///     appVersion                    as a 64-bit two's complement pattern
///     valueCount, storesLocations   the layout it was written for (0 or 1)
///     redundantOpCount, count       the journal's redundant lines; the number of entries
///     count × entry, eldest first:  key length (1 byte), key bytes, each slot's length,
///                                   and in packed storage the record's segment and offset
///     XXH64 of all the above        8 bytes, little-endian
///
/// - Complexity: O(entries) to write and to read; reading allocates the index and nothing per
///   entry beyond its key (none for keys of up to 15 bytes, which `String` holds inline) and,
///   past two slots, its lengths (``SlotLengths``).
enum IndexSnapshot {
    static let magic = Array("SCIDX001".utf8)

    /// The snapshot of `table` (committed entries only, in LRU order); `nil` when an entry
    /// cannot be written (an edit in progress, or a key longer than 255 bytes, which only a
    /// journal the Java library wrote can hold).
    static func encode(
        _ table: EntryTable, appVersion: Int, valueCount: Int, storesLocations: Bool, redundantOpCount: Int
    ) -> [UInt8]? {
        var bytes = magic
        bytes.reserveCapacity(magic.count + table.count * (24 + 3 * valueCount) + 32)
        appendVarint(UInt64(bitPattern: Int64(appVersion)), to: &bytes)
        appendVarint(UInt64(valueCount), to: &bytes)
        bytes.append(storesLocations ? 1 : 0)
        appendVarint(UInt64(max(0, redundantOpCount)), to: &bytes)
        appendVarint(UInt64(table.count), to: &bytes)
        var cursor = table.eldest
        while cursor != -1 {
            let entry = table[cursor]
            guard entry.isReadable, !entry.isBeingEdited, entry.lengths.count == valueCount else { return nil }
            var key = entry.key
            let fits = key.withUTF8 { utf8 -> Bool in
                guard (1...255).contains(utf8.count) else { return false }
                bytes.append(UInt8(utf8.count))
                bytes.append(contentsOf: utf8)
                return true
            }
            guard fits else { return nil }
            for length in entry.lengths { appendVarint(UInt64(max(0, length)), to: &bytes) }
            if storesLocations {
                appendVarint(UInt64(entry.location.segment), to: &bytes)
                appendVarint(UInt64(max(0, entry.location.offset)), to: &bytes)
            }
            cursor = table.indexAfter(cursor)
        }
        let checksum = bytes.withUnsafeBytes { XXHash64.hash($0) }
        withUnsafeBytes(of: checksum.littleEndian) { bytes.append(contentsOf: $0) }
        return bytes
    }

    /// What a loaded snapshot says beside its entries.
    struct Loaded: Equatable {
        /// The journal's redundant line count.
        var redundantOpCount: Int
        /// The sum of every entry's lengths: the cache's size.
        var totalLength: Int
    }

    /// Loads a snapshot into `table` (which must be empty), or returns `nil`, leaving `table`
    /// empty, when the bytes are not a whole, matching snapshot or its lengths add up past
    /// `Int.max`.
    static func decode(
        _ snapshot: UnsafeRawBufferPointer, appVersion: Int, valueCount: Int, storesLocations: Bool,
        into table: inout EntryTable
    ) -> Loaded? {
        guard snapshot.count >= magic.count + 8 else { return nil }
        let body = UnsafeRawBufferPointer(rebasing: snapshot[..<(snapshot.count - 8)])
        let stored = UInt64(littleEndian: snapshot.loadUnaligned(fromByteOffset: snapshot.count - 8, as: UInt64.self))
        guard body.prefix(magic.count).elementsEqual(magic), XXHash64.hash(body) == stored else { return nil }
        var reader = Reader(bytes: body, position: magic.count)
        guard reader.varint() == UInt64(bitPattern: Int64(appVersion)), reader.varint() == UInt64(valueCount),
            reader.byte() == (storesLocations ? 1 : 0),
            let redundant = reader.varint().flatMap({ Int(exactly: $0) }),
            let count = reader.varint().flatMap({ Int(exactly: $0) }),
            count <= body.count  // every entry takes bytes: a count past them is damage
        else { return nil }
        table.reserveCapacity(count)
        var total = 0
        for _ in 0..<count {
            guard let entry = reader.entry(valueCount: valueCount, storesLocations: storesLocations),
                let entryTotal = entry.lengths.total
            else {
                table.removeAll()
                return nil
            }
            let (sum, overflow) = total.addingReportingOverflow(entryTotal)
            guard !overflow else {
                table.removeAll()
                return nil
            }
            total = sum
            guard table.appendCommitted(key: entry.key, lengths: entry.lengths, location: entry.location) else {
                table.removeAll()  // a key twice: not an index this cache wrote
                return nil
            }
        }
        guard reader.position == body.count, table.count == count else {
            table.removeAll()
            return nil
        }
        return Loaded(redundantOpCount: redundant, totalLength: total)
    }

    private struct DecodedEntry {
        var key: String
        var lengths: SlotLengths
        var location: ValueLocation
    }

    private struct Reader {
        let bytes: UnsafeRawBufferPointer
        var position: Int

        @inline(__always)
        mutating func byte() -> UInt8? {
            guard position < bytes.count else { return nil }
            let value = bytes.load(fromByteOffset: position, as: UInt8.self)
            position &+= 1
            return value
        }

        @inline(__always)
        mutating func varint() -> UInt64? {
            // One byte: every length below 128, the common case.
            if position < bytes.count {
                let first = bytes.load(fromByteOffset: position, as: UInt8.self)
                if first & 0x80 == 0 {
                    position &+= 1
                    return UInt64(first)
                }
            }
            var value: UInt64 = 0
            var shift: UInt64 = 0
            while let byte = byte() {
                guard shift < 64 else { return nil }
                value |= UInt64(byte & 0x7F) << shift
                if byte & 0x80 == 0 { return value }
                shift += 7
            }
            return nil
        }

        @inline(__always)
        mutating func length() -> Int? { varint().flatMap { Int(exactly: $0) } }

        mutating func entry(valueCount: Int, storesLocations: Bool) -> DecodedEntry? {
            guard let keyLength = byte().map(Int.init), keyLength > 0, position + keyLength <= bytes.count,
                let base = bytes.baseAddress
            else { return nil }
            let keyBytes = UnsafeBufferPointer(
                start: (base + position).assumingMemoryBound(to: UInt8.self), count: keyLength)
            guard JournalParser.isReplayableKey(keyBytes[...]) else { return nil }
            let key = String(decoding: keyBytes, as: UTF8.self)
            position += keyLength
            // Inline for one or two slots: nothing allocated per entry.
            let lengths: SlotLengths
            if valueCount <= 2 {
                var first = 0
                var second = 0
                if valueCount > 0 {
                    guard let length = length() else { return nil }
                    first = length
                }
                if valueCount > 1 {
                    guard let length = length() else { return nil }
                    second = length
                }
                lengths = SlotLengths(inline: first, second, count: valueCount)
            } else {
                var spilled: [Int] = []
                spilled.reserveCapacity(valueCount)
                for _ in 0..<valueCount {
                    guard let length = length() else { return nil }
                    spilled.append(length)
                }
                lengths = SlotLengths(spilled)
            }
            var location = ValueLocation.none
            if storesLocations {
                guard let segment = varint().flatMap({ UInt32(exactly: $0) }),
                    let offset = varint().flatMap({ Int64(exactly: $0) })
                else { return nil }
                location = ValueLocation(segment: segment, offset: offset)
            }
            return DecodedEntry(key: key, lengths: lengths, location: location)
        }
    }

    private static func appendVarint(_ value: UInt64, to bytes: inout [UInt8]) {
        var value = value
        while value >= 0x80 {
            bytes.append(UInt8(truncatingIfNeeded: value) | 0x80)
            value >>= 7
        }
        bytes.append(UInt8(value))
    }
}
