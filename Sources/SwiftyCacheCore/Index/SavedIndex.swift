/// The index as `close()` left it, so that the next open loads it instead of replaying the
/// journal: the journal stays the source of truth (and the Java format), the saved index only a
/// shortcut to the state it describes.
///
/// It follows the clean marker's line in `journal.clean` (see ``CacheDirectory/leaveCleanMarker(writingSnapshot:)``), so it is
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
/// Both directions go through a buffer of at most a mebibyte (the checksum is computed as the
/// bytes pass), never the whole saved index: one of ten million entries is hundreds of
/// megabytes, which neither `close()` nor the next open holds beside the index.
///
/// - Complexity: O(entries) to write and to read; reading allocates the index's arrays once
///   (their sizes are known up front) and nothing per entry: keys go from the read buffer
///   into the key arena.
enum SavedIndex {
    static let magic = Array("SCIDX001".utf8)
    /// The size of the buffer bytes go through (tests pass smaller ones).
    static let defaultBufferSize = 1 << 20

    /// Whether `table` can be written: only committed entries with `valueCount` lengths and
    /// keys of 1 to 255 bytes, not an edit in progress (nor a key longer than 255 bytes,
    /// which only a journal the Java library wrote can hold).
    ///
    /// - Complexity: O(entries), allocating nothing.
    static func canWrite(_ table: EntryTable, valueCount: Int) -> Bool {
        var cursor = table.eldest
        while cursor != -1 {
            let entry = table[cursor]
            guard entry.isReadable, !entry.isBeingEdited, entry.lengths.count == valueCount,
                table.withKey(at: cursor, { (1...255).contains($0.count) })
            else { return false }
            cursor = table.indexAfter(cursor)
        }
        return true
    }

    /// Writes the saved index of `table` (committed entries only, in LRU order) through `emit`,
    /// a mebibyte at a time; writes nothing when ``canWrite(_:valueCount:)`` says it cannot.
    /// Stops at the first piece `emit` fails to write (returns `false`).
    static func write(
        _ table: EntryTable, appVersion: Int, valueCount: Int, storesLocations: Bool, redundantOpCount: Int,
        bufferSize: Int = defaultBufferSize, to emit: (UnsafeRawBufferPointer) -> Bool
    ) {
        guard canWrite(table, valueCount: valueCount) else { return }
        var hasher = XXHash64.Stream()
        var bytes = magic
        bytes.reserveCapacity(bufferSize + 1024)
        var failed = false
        func flush() {
            guard !failed else { return }
            bytes.withUnsafeBytes { piece in
                hasher.update(piece)
                failed = !emit(piece)
            }
            bytes.removeAll(keepingCapacity: true)
        }
        LEB128.append(UInt64(bitPattern: Int64(appVersion)), to: &bytes)
        LEB128.append(UInt64(valueCount), to: &bytes)
        bytes.append(storesLocations ? 1 : 0)
        LEB128.append(UInt64(max(0, redundantOpCount)), to: &bytes)
        LEB128.append(UInt64(table.count), to: &bytes)
        var cursor = table.eldest
        while cursor != -1 && !failed {
            let entry = table[cursor]
            table.withKey(at: cursor) { key in
                bytes.append(UInt8(truncatingIfNeeded: key.count))
                bytes.append(contentsOf: key)
            }
            for length in entry.lengths { LEB128.append(UInt64(max(0, length)), to: &bytes) }
            if storesLocations {
                LEB128.append(UInt64(entry.location.segment), to: &bytes)
                LEB128.append(UInt64(max(0, entry.location.offset)), to: &bytes)
            }
            if bytes.count >= bufferSize { flush() }
            cursor = table.indexAfter(cursor)
        }
        flush()
        guard !failed else { return }
        withUnsafeBytes(of: hasher.finalize().littleEndian) { _ = emit($0) }
    }

    /// What a loaded snapshot says beside its entries.
    struct Loaded: Equatable {
        /// The journal's redundant line count.
        var redundantOpCount: Int
        /// The sum of every entry's lengths: the cache's size.
        var totalLength: Int
    }

    /// The table the saved index in `region` describes, in either form (the image, or the
    /// first form an earlier release or a table the image cannot hold left), or `nil` when it is
    /// not a whole, matching saved index.
    static func load(
        _ region: FileRegion, appVersion: Int, valueCount: Int, storesLocations: Bool
    ) -> (table: EntryTable, loaded: Loaded)? {
        var magicBytes = [UInt8](repeating: 0, count: imageMagic.count)
        let count = magicBytes.withUnsafeMutableBytes { region.read(into: $0, at: 0) }
        if count == imageMagic.count && magicBytes == imageMagic {
            return readImage(region, appVersion: appVersion, valueCount: valueCount, storesLocations: storesLocations)
        }
        var table = EntryTable()
        guard
            let loaded = read(
                region, appVersion: appVersion, valueCount: valueCount, storesLocations: storesLocations, into: &table)
        else { return nil }
        return (table, loaded)
    }

    /// Loads the saved index in `region` into `table` (which must be empty), or returns `nil`,
    /// leaving `table` empty, when the bytes are not a whole, matching snapshot or its lengths
    /// add up past `Int.max`.
    static func read(
        _ region: FileRegion, appVersion: Int, valueCount: Int, storesLocations: Bool,
        bufferSize: Int = defaultBufferSize, into table: inout EntryTable
    ) -> Loaded? {
        guard region.count >= magic.count + 8, valueCount >= 0, valueCount <= 1 << 20 else { return nil }
        let bodyCount = region.count - 8
        // Every entry fits the buffer whole: its key, its lengths and location as varints.
        let largestEntry = 1 + 255 + 10 * (valueCount + 2)
        let capacity = max(bufferSize, 2 * largestEntry)
        var reader = Reader(region: region, bodyCount: bodyCount, capacity: capacity)
        // Entries are read a batch at a time, their buckets touched before they are inserted.
        let batch = max(1, min(EntryTable.prefetchBatch, capacity / 2 / largestEntry))
        var entries: [DecodedEntry] = []
        var tags: [UInt32] = []
        entries.reserveCapacity(batch)
        tags.reserveCapacity(batch)
        defer { reader.deallocate() }
        let loaded = { () -> Loaded? in
            guard reader.ensure(largestEntry), reader.skip(magic),
                reader.varint() == UInt64(bitPattern: Int64(appVersion)),
                reader.varint() == UInt64(valueCount), reader.byte() == (storesLocations ? 1 : 0),
                let redundant = reader.varint().flatMap({ Int(exactly: $0) }),
                let count = reader.varint().flatMap({ Int(exactly: $0) }),
                count <= bodyCount  // every entry takes bytes: a count past them is damage
            else { return nil }
            // Keys take less than the saved index: their bytes are reserved once, never regrown.
            table.reserveCapacity(count, keyBytes: bodyCount)
            var total = 0
            var remaining = count
            while remaining > 0 {
                let size = min(batch, remaining)
                // The keys point into the buffer, which stays put until the next `ensure`.
                guard reader.ensure(size * largestEntry) else { return nil }
                entries.removeAll(keepingCapacity: true)
                tags.removeAll(keepingCapacity: true)
                for _ in 0..<size {
                    guard let entry = reader.entry(valueCount: valueCount, storesLocations: storesLocations),
                        let entryTotal = entry.lengths.total
                    else { return nil }
                    let (sum, overflow) = total.addingReportingOverflow(entryTotal)
                    guard !overflow else { return nil }
                    total = sum
                    entries.append(entry)
                    tags.append(table.tag(of: entry.key))
                }
                table.prefetch(tags: tags)
                for (entry, tag) in zip(entries, tags) {
                    // A key twice: not an index this cache wrote.
                    guard
                        table.appendCommitted(
                            key: entry.key, tag: tag, lengths: entry.lengths, location: entry.location)
                    else { return nil }
                }
                remaining -= size
            }
            guard reader.isAtEnd, table.count == count else { return nil }
            return Loaded(redundantOpCount: redundant, totalLength: total)
        }()
        guard let loaded, reader.checksumMatches() else {
            table.removeAll()
            return nil
        }
        return loaded
    }
}
