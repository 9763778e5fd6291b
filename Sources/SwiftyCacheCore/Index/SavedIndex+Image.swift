/// The saved index's second form, the image: the index's own arrays as the next open uses them,
/// so that loading is reading and checking, with no key hashed into a table and no entry
/// inserted one at a time (the first form, ``SavedIndex``, stays for what the image cannot hold
/// and for indexes an earlier release saved).
///
/// Entries are written eldest first, so that their LRU links follow from their positions; the
/// hash table's buckets name positions. Integers are unsigned LEB128 varints in the header,
/// little-endian of fixed width after it:
///
///     "SCIDX002"                         magic, 8 bytes
///     appVersion                         as a 64-bit two's complement pattern
///     valueCount (0 to 2), storesLocations (1 byte)
///     redundantOpCount, count, arenaBytes
///     log2(bucketCount)                  1 byte; 0 for an empty index
///     seed                               the keys' hash seed, 8 bytes
///     arena                              arenaBytes: the keys no entry holds inline, eldest
///                                        first, each after its length (``KeyArena``)
///     count × 56 bytes, eldest first:    key word (8: length and form, or arena offset), two
///                                        slot lengths (4 each), segment and offset (4 each),
///                                        the inline key (32, zero when the key is in the arena)
///     bucketCount × 8 bytes              the buckets: tag << 32 | (position + 1), 0 for empty
///     XXH64 of all the above             8 bytes
///
/// The loader trusts nothing in it (``readImage(_:appVersion:valueCount:storesLocations:bufferSize:)``):
/// every key is checked as a journal's key is, every tag against its key's hash, every bucket
/// against the probe that must reach it, and the sizes against the file's, so that a damaged or
/// forged image is refused (the journal is then replayed) and never costs more memory than its
/// size.
///
/// - Complexity: O(entries) to write, with a walk of the LRU list and 4 bytes per record of
///   memory; O(entries + buckets) to read, the arrays allocated once at their final size.
extension SavedIndex {
    static let imageMagic = Array("SCIDX002".utf8)
    /// The bytes of one entry.
    static let imageEntrySize = 56

    /// Whether the image can hold `table`: at most two slots, every entry committed, no
    /// length or offset of 4 GiB or more (those live beside the records), fewer entries than a
    /// bucket can name.
    static func canWriteImage(_ table: EntryTable, valueCount: Int) -> Bool {
        (0...2).contains(valueCount) && table.count < Int(UInt32.max) && table.readableCount == table.count
            && table.editors.isEmpty && table.spilledLengths.isEmpty && table.spilledOffsets.isEmpty
    }

    /// Writes the saved index of `table`: its image when ``canWriteImage(_:valueCount:)`` allows,
    /// else the first form (``write(_:appVersion:valueCount:storesLocations:redundantOpCount:bufferSize:to:)``).
    static func save(
        _ table: EntryTable, appVersion: Int, valueCount: Int, storesLocations: Bool, redundantOpCount: Int,
        to emit: (UnsafeRawBufferPointer) -> Bool
    ) {
        if canWriteImage(table, valueCount: valueCount) {
            writeImage(
                table, appVersion: appVersion, valueCount: valueCount, storesLocations: storesLocations,
                redundantOpCount: redundantOpCount, to: emit)
        } else {
            write(
                table, appVersion: appVersion, valueCount: valueCount, storesLocations: storesLocations,
                redundantOpCount: redundantOpCount, to: emit)
        }
    }

    /// Writes `table`'s image through `emit`, a buffer of `bufferSize` bytes at a time; stops at
    /// the first piece `emit` fails to write. Requires ``canWriteImage(_:valueCount:)``.
    static func writeImage(
        _ table: EntryTable, appVersion: Int, valueCount: Int, storesLocations: Bool, redundantOpCount: Int,
        bufferSize: Int = defaultBufferSize, to emit: (UnsafeRawBufferPointer) -> Bool
    ) {
        guard canWriteImage(table, valueCount: valueCount) else { return }
        // Each record's position in the LRU order, and the arena the keys not held inline take.
        var positions = [UInt32](repeating: EntryRecord.none, count: table.records.count)
        var arenaBytes = 0
        var count = 0
        var cursor = table.eldest
        while cursor != -1 && count < table.count {
            positions[cursor] = UInt32(truncatingIfNeeded: count)
            let record = table.records[cursor]
            if !record.hasInlineKey { arenaBytes &+= KeyArena.prefixSize(record.keyLength) &+ record.keyLength }
            count &+= 1
            cursor = table.indexAfter(cursor)
        }
        guard count == table.count, cursor == -1 else { return }
        withoutActuallyEscaping(emit) { emit in
            var output = ImageOutput(capacity: bufferSize, emit: emit)
            defer { output.deallocate() }
            writeImage(
                table, appVersion: appVersion, valueCount: valueCount, storesLocations: storesLocations,
                redundantOpCount: redundantOpCount, count: count, arenaBytes: arenaBytes, positions: positions,
                to: &output)
        }
    }

    private static func writeImage(
        _ table: EntryTable, appVersion: Int, valueCount: Int, storesLocations: Bool, redundantOpCount: Int,
        count: Int, arenaBytes: Int, positions: [UInt32], to output: inout ImageOutput
    ) {
        var header = imageMagic
        LEB128.append(UInt64(bitPattern: Int64(appVersion)), to: &header)
        header.append(UInt8(truncatingIfNeeded: valueCount))
        header.append(storesLocations ? 1 : 0)
        LEB128.append(UInt64(max(0, redundantOpCount)), to: &header)
        LEB128.append(UInt64(count), to: &header)
        LEB128.append(UInt64(arenaBytes), to: &header)
        let bucketCount = count == 0 ? 0 : RecordBuckets.bucketCount(for: count)
        header.append(count == 0 ? 0 : UInt8(truncatingIfNeeded: bucketCount.trailingZeroBitCount))
        header.withUnsafeBytes { output.append($0) }
        output.append(table.seed)
        var cursor = table.eldest
        if arenaBytes > 0 {
            while cursor != -1 {
                let record = table.records[cursor]
                if !record.hasInlineKey {
                    var prefix: [UInt8] = []
                    LEB128.append(UInt64(record.keyLength), to: &prefix)
                    prefix.withUnsafeBytes { output.append($0) }
                    table.arena.withKey(at: record.keyOffset, length: record.keyLength) {
                        output.append(UnsafeRawBufferPointer($0))
                    }
                }
                cursor = table.indexAfter(cursor)
            }
        }
        var arenaCursor = 0
        cursor = table.eldest
        while cursor != -1 {
            var record = table.records[cursor]
            if !record.hasInlineKey {
                arenaCursor &+= KeyArena.prefixSize(record.keyLength)
                record.setKey(offset: arenaCursor, length: record.keyLength)
                arenaCursor &+= record.keyLength
            }
            output.append(record.keyWord)
            output.append(UInt64(record.length0) | UInt64(record.length1) << 32)
            output.append(UInt64(record.segment) | UInt64(record.offset) << 32)
            output.append(record.inlineKeyWords.0)
            output.append(record.inlineKeyWords.1)
            output.append(record.inlineKeyWords.2)
            output.append(record.inlineKeyWords.3)
            cursor = table.indexAfter(cursor)
        }
        writeBuckets(of: table, count: bucketCount, positions: positions, to: &output)
        output.finish()
    }

    /// The table's buckets with positions for records: in place when the table has as many
    /// buckets as an image of its size (a bucket's place depends on its tag and the count
    /// only), else placed anew in a table of that size.
    private static func writeBuckets(
        of table: EntryTable, count: Int, positions: [UInt32], to output: inout ImageOutput
    ) {
        func renamed(_ stored: UInt64) -> UInt64 {
            guard stored != 0 else { return 0 }
            let record = Int(truncatingIfNeeded: stored & 0xFFFF_FFFF) &- 1
            return RecordBuckets.bucket(
                record: Int(positions[record]), tag: UInt32(truncatingIfNeeded: stored >> 32))
        }
        if table.buckets.buckets.count == count {
            for stored in table.buckets.buckets { output.append(renamed(stored)) }
            return
        }
        var placed = [UInt64](repeating: 0, count: count)
        for stored in table.buckets.buckets where stored != 0 {
            let bucket = renamed(stored)
            RecordBuckets.place(
                record: Int(truncatingIfNeeded: bucket & 0xFFFF_FFFF) &- 1,
                tag: UInt32(truncatingIfNeeded: bucket >> 32),
                in: &placed)
        }
        for stored in placed { output.append(stored) }
    }
}

/// The image's bytes on their way out: a buffer handed to `emit` when full, hashed as it goes,
/// and the hash after the last.
private struct ImageOutput {
    private let buffer: UnsafeMutableRawBufferPointer
    private var used = 0
    private var hasher = XXHash64.Stream()
    private var failed = false
    private let emit: (UnsafeRawBufferPointer) -> Bool

    init(capacity: Int, emit: @escaping (UnsafeRawBufferPointer) -> Bool) {
        buffer = .allocate(byteCount: max(capacity, 4096), alignment: 8)
        self.emit = emit
    }

    func deallocate() { buffer.deallocate() }

    @inline(__always)
    mutating func append(_ value: UInt64) {
        if used &+ 8 > buffer.count { flush() }
        buffer.storeBytes(of: value.littleEndian, toByteOffset: used, as: UInt64.self)
        used &+= 8
    }

    mutating func append(_ bytes: UnsafeRawBufferPointer) {
        var start = 0
        while start < bytes.count {
            if used == buffer.count { flush() }
            let piece = min(bytes.count &- start, buffer.count &- used)
            UnsafeMutableRawBufferPointer(rebasing: buffer[used..<(used &+ piece)])
                .copyMemory(from: UnsafeRawBufferPointer(rebasing: bytes[start..<(start &+ piece)]))
            used &+= piece
            start &+= piece
        }
    }

    private mutating func flush() {
        guard used > 0 else { return }
        let piece = UnsafeRawBufferPointer(rebasing: buffer[0..<used])
        hasher.update(piece)
        if !failed { failed = !emit(piece) }
        used = 0
    }

    /// Writes what is left and the checksum.
    mutating func finish() {
        flush()
        guard !failed else { return }
        withUnsafeBytes(of: hasher.finalize().littleEndian) { _ = emit($0) }
    }
}
