/// Loading the saved index's image (``SavedIndex/writeImage(_:appVersion:valueCount:storesLocations:redundantOpCount:bufferSize:to:)``):
/// read into arrays of their final size, every part checked before the table is made.
extension SavedIndex {
    /// The table an image describes and what it says beside, or `nil` when the bytes are not a
    /// whole, matching, consistent image (then the journal is replayed).
    ///
    /// - Complexity: O(entries + buckets); memory: the table, plus one bit per entry while the
    ///   buckets are checked.
    static func readImage(
        _ region: FileRegion, appVersion: Int, valueCount: Int, storesLocations: Bool,
        bufferSize: Int = defaultBufferSize
    ) -> (table: EntryTable, loaded: Loaded)? {
        guard (0...2).contains(valueCount), region.count >= imageMagic.count + 8 else { return nil }
        let bodyCount = region.count &- 8
        let capacity = max(bufferSize, 64 * imageEntrySize)
        var reader = Reader(region: region, bodyCount: bodyCount, capacity: capacity)
        defer { reader.deallocate() }
        guard reader.ensure(64), reader.skip(imageMagic),
            reader.varint() == UInt64(bitPattern: Int64(appVersion)),
            reader.byte() == UInt8(valueCount), reader.byte() == (storesLocations ? 1 : 0),
            let redundant = reader.varint().flatMap({ Int(exactly: $0) }),
            let count = reader.varint().flatMap({ Int(exactly: $0) }), count < Int(UInt32.max),
            let arenaBytes = reader.varint().flatMap({ Int(exactly: $0) }), arenaBytes <= EntryRecord.maximumKeyOffset,
            let bucketShift = reader.byte(), let seed = reader.word()
        else { return nil }
        // The sizes must add up to the file's: nothing is allocated beyond what it holds.
        guard count == 0 ? bucketShift == 0 : (3...32).contains(bucketShift) else { return nil }
        let bucketCount = count == 0 ? 0 : 1 << Int(bucketShift)
        let (entryBytes, entryOverflow) = count.multipliedReportingOverflow(by: imageEntrySize)
        guard !entryOverflow, bodyCount &- reader.consumed == arenaBytes &+ entryBytes &+ bucketCount &* 8 else {
            return nil
        }
        var arena = [UInt8](repeating: 0, count: arenaBytes)
        guard arena.withUnsafeMutableBytes({ reader.read(into: $0) }) else { return nil }
        var image = ImageEntries(count: count, valueCount: valueCount, storesLocations: storesLocations, seed: seed)
        guard arena.withUnsafeBufferPointer({ image.read(from: &reader, arena: $0) }) else { return nil }
        var buckets = [UInt64](repeating: 0, count: bucketCount)
        guard buckets.withUnsafeMutableBytes({ reader.read(into: $0) }), reader.isAtEnd, reader.checksumMatches()
        else { return nil }
        for index in buckets.indices { buckets[index] = UInt64(littleEndian: buckets[index]) }
        let table = EntryTable(
            loadedRecords: image.records, arena: KeyArena(bytes: arena), buckets: RecordBuckets(), seed: seed)
        guard count > 0 else {
            return (table, Loaded(redundantOpCount: redundant, totalLength: image.totalLength))
        }
        guard let adopted = RecordBuckets(adopting: buckets, count: count),
            adopted.adoptionViolation(
                pairSum: image.pairSum, mixKey: image.mixKey,
                sameKey: { left, right in table.withKey(at: left) { key in table.hasKey(key, at: right) } },
                maximumSteps: 32 &* count &+ bucketCount) == nil
        else { return nil }
        var loaded = table
        loaded.buckets = adopted
        return (loaded, Loaded(redundantOpCount: redundant, totalLength: image.totalLength))
    }
}

/// The entries of an image as they are read: each checked, made a record linked to its
/// neighbours, its key's tag added to the sum the buckets' check compares.
private struct ImageEntries {
    let count: Int
    let valueCount: Int
    let storesLocations: Bool
    let seed: UInt64
    var records: [EntryRecord] = []
    /// The sum of every record's ``RecordBuckets/mixedPair(record:tag:key:)`` with its key's
    /// tag, under `mixKey`, for the buckets' check.
    private(set) var pairSum: UInt64 = 0
    let mixKey = UInt64.random(in: 0...UInt64.max)
    var totalLength = 0
    /// Where the next key in the arena must start (past its length).
    private var arenaCursor = 0

    init(count: Int, valueCount: Int, storesLocations: Bool, seed: UInt64) {
        self.count = count
        self.valueCount = valueCount
        self.storesLocations = storesLocations
        self.seed = seed
        recordsFaultAhead.reserve(&records, capacity: count)
    }

    /// The records' capacity, faulted in a window at a time ahead of the entries read.
    private var recordsFaultAhead = FaultAhead()

    private static let inlineBit: UInt64 = 1 << 62
    private static let packedHexBit: UInt64 = 1 << 61

    /// Reads and checks every entry; `false` at the first that is not one a table could hold.
    mutating func read(from reader: inout SavedIndex.Reader, arena: UnsafeBufferPointer<UInt8>) -> Bool {
        let perFill = 64
        var position = 0
        while position < count {
            let batch = min(perFill, count &- position)
            guard reader.ensure(batch &* SavedIndex.imageEntrySize) else { return false }
            for _ in 0..<batch {
                let entry = reader.take(SavedIndex.imageEntrySize) { bytes in
                    entryRecord(bytes, at: position, arena: arena)
                }
                guard let entry = entry ?? nil else { return false }
                records.append(entry.record)
                recordsFaultAhead.advance(&records)
                pairSum &+= RecordBuckets.mixedPair(record: position, tag: entry.tag, key: mixKey)
                position &+= 1
            }
        }
        return arenaCursor == arena.count
    }

    /// The record of the entry in `bytes`, the `position`-th, and its key's tag; `nil` when a
    /// field is out of its range or the key is not one a journal may hold, not in the form
    /// ``InlineKey`` gives it, or not where the arena's walk puts it.
    private mutating func entryRecord(
        _ bytes: UnsafeRawBufferPointer, at position: Int, arena: UnsafeBufferPointer<UInt8>
    ) -> (record: EntryRecord, tag: UInt32)? {
        func word(_ index: Int) -> UInt64 {
            UInt64(littleEndian: bytes.loadUnaligned(fromByteOffset: index &* 8, as: UInt64.self))
        }
        var record = EntryRecord()
        record.keyWord = word(0)
        let lengths = word(1)
        let location = word(2)
        record.inlineKeyWords = (word(3), word(4), word(5), word(6))
        record.length0 = UInt32(truncatingIfNeeded: lengths)
        record.length1 = UInt32(truncatingIfNeeded: lengths >> 32)
        record.segment = UInt32(truncatingIfNeeded: location)
        record.offset = UInt32(truncatingIfNeeded: location >> 32)
        guard valueCount == 2 || record.length1 == 0, valueCount >= 1 || record.length0 == 0,
            storesLocations || location == 0
        else { return nil }
        let (sum, overflow) = totalLength.addingReportingOverflow(Int(record.length0) &+ Int(record.length1))
        guard !overflow else { return nil }
        totalLength = sum
        guard let tag = checkedKeyTag(&record, arena: arena) else { return nil }
        record.flags = EntryRecord.Flags(
            rawValue: EntryRecord.Flags.live.rawValue | EntryRecord.Flags.readable.rawValue
                | UInt8(valueCount) << EntryRecord.Flags.countShift)
        record.previous = position == 0 ? EntryRecord.none : UInt32(truncatingIfNeeded: position &- 1)
        record.next = position == count &- 1 ? EntryRecord.none : UInt32(truncatingIfNeeded: position &+ 1)
        return (record, tag)
    }

    /// The tag of the record's key once the key checks out, `nil` otherwise.
    private mutating func checkedKeyTag(_ record: inout EntryRecord, arena: UnsafeBufferPointer<UInt8>) -> UInt32? {
        let keyWord = record.keyWord
        let length = record.keyLength
        let seed = self.seed
        guard keyWord >> 63 == 0, length > 0 else { return nil }
        if keyWord & Self.inlineBit == 0 {
            // In the arena: where the walk puts it, after its length, and with no inline form.
            guard keyWord & Self.packedHexBit == 0, record.inlineKeyWords == (0, 0, 0, 0) else { return nil }
            let start = arenaCursor &+ KeyArena.prefixSize(length)
            guard record.keyOffset == start, length <= arena.count &- start else { return nil }
            var prefixPosition = arenaCursor
            guard LEB128.read(UnsafeRawBufferPointer(arena), at: &prefixPosition) == UInt64(length),
                prefixPosition == start
            else { return nil }
            arenaCursor = start &+ length
            let key = UnsafeBufferPointer(rebasing: arena[start..<(start &+ length)])
            guard InlineKey(key) == nil, CacheFileName.isReplayableKey(key[...]) else { return nil }
            return RecordBuckets.tag(of: XXHash64.hash(UnsafeRawBufferPointer(key), seed: seed))
        }
        guard keyWord & EntryRecord.keyOffsetMask == 0 else { return nil }
        let isPackedHex = keyWord & Self.packedHexBit != 0
        // The form ``InlineKey`` gives a key of this length, and nothing past its bytes.
        let storedBytes: Int
        if isPackedHex {
            guard length > InlineKey.maximumRawLength, length <= InlineKey.maximumHexLength, length % 2 == 0 else {
                return nil
            }
            storedBytes = length / 2
        } else {
            guard length <= InlineKey.maximumRawLength else { return nil }
            storedBytes = length
        }
        let padded = withUnsafeBytes(of: record.inlineKeyWords) { words in
            words[storedBytes...].allSatisfy { $0 == 0 }
        }
        guard padded else { return nil }
        return record.inlineKey.withKey(length: length) { key -> UInt32? in
            guard isPackedHex || CacheFileName.isReplayableKey(key[...]) else { return nil }
            return RecordBuckets.tag(of: XXHash64.hash(UnsafeRawBufferPointer(key), seed: seed))
        }
    }
}
