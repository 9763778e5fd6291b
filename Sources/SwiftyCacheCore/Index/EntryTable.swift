/// The index: entries by key, in least-recently-used order, plus the count of committed ones.
///
/// Three arrays of plain integers hold it: the entries' 72-byte ``EntryRecord``s (their LRU
/// links are 32-bit record indices; keys of up to 32 bytes, or 64 hexadecimal digits, inside
/// them, see ``InlineKey``), the other keys' bytes back to back in a ``KeyArena``, and a
/// ``RecordBuckets`` hash table of 8-byte buckets. Nothing is allocated per entry: with keys
/// of 64 hexadecimal digits and two slots, an entry takes about 72 + 8 to 16 bytes
/// (docs/PERFORMANCE.md measures the process). Keys are compared as bytes (they are ASCII) and hashed with XXH64
/// under a seed drawn per table, so that keys chosen by an adversary do not collide more than
/// others.
///
/// Indices come from ``index(of:)`` or the LRU walk and stay valid until the entry is removed.
/// Using a stale one is a bug in the engine, never a consequence of input: debug builds assert.
/// The table holds at most 4,294,967,294 entries and a terabyte of keys, far beyond the memory
/// such an index would take.
///
/// - Complexity: lookup, insert, remove and touch are O(1) amortized (key bytes aside).
struct EntryTable {
    var records: [EntryRecord] = []
    var arena = KeyArena()
    var buckets = RecordBuckets()
    /// The head of the free list threaded through free records' `next`.
    var freeHead = EntryRecord.none
    /// Editors of the entries being edited, by record.
    var editors: [Int: UInt64] = [:]
    /// Lengths that do not fit a record (more than two slots, or 4 GiB and more), by record.
    var spilledLengths: [Int: SlotLengths] = [:]
    /// Packed offsets of 4 GiB and more, by record.
    var spilledOffsets: [Int: Int64] = [:]
    /// A reserved records array's capacity, faulted in just ahead of the records appended.
    var recordsFaultAhead = FaultAhead()
    /// The least and most recently used records.
    var eldestRecord = EntryRecord.none
    var newestRecord = EntryRecord.none
    /// The seed of the keys' hashes, drawn per table (or kept from a saved index's image).
    let seed: UInt64
    /// All entries, committed or being created.
    private(set) var count = 0
    /// How many entries have been committed (editors of new entries are not counted).
    private(set) var readableCount = 0
    /// The bytes of all entries' keys (what ``SizeBudget`` charges for them).
    private(set) var keyBytes = 0

    init(seed: UInt64 = UInt64.random(in: 0...UInt64.max)) {
        self.seed = seed
    }

    /// A table of `records` committed entries, eldest first and linked so (see
    /// ``SavedIndex/readImage(_:appVersion:valueCount:storesLocations:)``, which checks every
    /// part), their keys' hashes seeded with `seed`.
    init(loadedRecords records: [EntryRecord], arena: KeyArena, buckets: RecordBuckets, seed: UInt64) {
        self.seed = seed
        self.records = records
        self.arena = arena
        self.buckets = buckets
        count = records.count
        readableCount = records.count
        keyBytes = records.reduce(0) { $0 &+ $1.keyLength }
        if !records.isEmpty {
            eldestRecord = 0
            newestRecord = Self.link(records.count &- 1)
        }
    }

    /// The least recently used entry, `-1` when empty.
    var eldest: Int { Self.index(eldestRecord) }

    @inline(__always)
    static func index(_ link: UInt32) -> Int { link == EntryRecord.none ? -1 : Int(link) }
    @inline(__always)
    static func link(_ index: Int) -> UInt32 { UInt32(truncatingIfNeeded: index) }

    @inline(__always)
    func tag(of key: UnsafeBufferPointer<UInt8>) -> UInt32 {
        RecordBuckets.tag(of: XXHash64.hash(UnsafeRawBufferPointer(key), seed: seed))
    }

    func index(of key: String) -> Int? {
        return key.withUTF8Bytes { index(ofKey: $0) }
    }

    /// The index of the entry whose key has these bytes, or `nil`.
    ///
    /// - Complexity: O(1) expected: one hash of the key, one probe, one comparison of bytes
    ///   (in the record for an ``InlineKey``, else in the arena).
    func index(ofKey key: UnsafeBufferPointer<UInt8>) -> Int? { index(ofKey: key, tag: tag(of: key)) }

    /// ``index(ofKey:)`` for a key whose ``tag(of:)`` the caller computed.
    func index(ofKey key: UnsafeBufferPointer<UInt8>, tag: UInt32) -> Int? {
        let inline = InlineKey(key)
        return buckets.find(tag: tag) { record in keyMatches(record, key, inline) }
    }

    /// Whether the record at `record` has the key `key`.
    func hasKey(_ key: UnsafeBufferPointer<UInt8>, at record: Int) -> Bool { keyMatches(record, key, InlineKey(key)) }

    /// Whether the record's key is `key` (whose ``InlineKey`` form is `inline`). A key with an
    /// inline form is held inline, so the arena is read only for keys that have none.
    @inline(__always)
    private func keyMatches(_ record: Int, _ key: UnsafeBufferPointer<UInt8>, _ inline: InlineKey?) -> Bool {
        let stored = records[record]
        guard stored.keyLength == key.count else { return false }
        if let inline { return stored.hasInlineKey && stored.inlineKey == inline }
        return !stored.hasInlineKey && arena.keyEquals(at: stored.keyOffset, length: stored.keyLength, key)
    }

    /// Makes room for `capacity` entries (and keys of `keyBytes` bytes in all), so that filling
    /// the table allocates each array once.
    mutating func reserveCapacity(_ capacity: Int, keyBytes: Int = 0) {
        guard capacity > 0 else { return }
        recordsFaultAhead.reserve(&records, capacity: capacity)
        buckets.reserveCapacity(capacity)
        if keyBytes > 0 { arena.reserveCapacity(keyBytes) }
    }

    /// The entry at a live index.
    subscript(_ index: Int) -> Entry {
        guard index >= 0, index < records.count, records[index].isLive else {
            assertionFailure("EntryTable: no live entry at index \(index)")
            return Entry(lengths: [])
        }
        let record = records[index]
        return Entry(
            lengths: lengths(of: record, at: index), location: location(of: record, at: index),
            editorID: record.isEditing ? editors[index] ?? 0 : 0, sequenceNumber: record.sequenceNumber,
            isReadable: record.isReadable, isDirtyJournaled: record.flags.contains(.dirtyJournaled))
    }

    @inline(__always)
    func lengths(of record: EntryRecord, at index: Int) -> SlotLengths {
        record.flags.contains(.spilledLengths) ? spilledLengths[index] ?? [] : record.inlineLengths
    }

    @inline(__always)
    func location(of record: EntryRecord, at index: Int) -> ValueLocation {
        let offset = record.flags.contains(.spilledOffset) ? spilledOffsets[index] ?? 0 : Int64(record.offset)
        return ValueLocation(segment: record.segment, offset: offset)
    }

    /// Records that the entry's values moved (compaction); not a use, not a new version.
    mutating func setLocation(_ index: Int, _ location: ValueLocation) {
        var record = records[index]
        store(location, in: &record, at: index)
        records[index] = record
    }

    mutating func setLengths(_ index: Int, _ lengths: SlotLengths) {
        var record = records[index]
        store(lengths, in: &record, at: index)
        records[index] = record
    }

    /// Puts `location` in `record` (the one at `index`), an offset past 4 GiB in the side table.
    @inline(__always)
    private mutating func store(_ location: ValueLocation, in record: inout EntryRecord, at index: Int) {
        record.segment = location.segment
        if let offset = UInt32(exactly: location.offset) {
            record.offset = offset
            if record.flags.contains(.spilledOffset) {
                record.flags.remove(.spilledOffset)
                spilledOffsets[index] = nil
            }
        } else {
            record.offset = 0
            record.flags.insert(.spilledOffset)
            spilledOffsets[index] = location.offset
        }
    }

    /// Puts `lengths` in `record` (the one at `index`), or in the side table if they do not fit.
    @inline(__always)
    private mutating func store(_ lengths: SlotLengths, in record: inout EntryRecord, at index: Int) {
        let wasSpilled = record.flags.contains(.spilledLengths)
        if record.setInlineLengths(lengths) {
            if wasSpilled { spilledLengths[index] = nil }
        } else {
            record.flags.insert(.spilledLengths)
            spilledLengths[index] = lengths
        }
    }

    /// Inserts a new entry as the most recently used one and returns its index.
    mutating func insert(key: String, valueCount: Int) -> Int {
        return key.withUTF8Bytes { bytes in
            buckets.makeRoomForOneMore()
            let index = place(key: bytes, inline: InlineKey(bytes), valueCount: valueCount)
            buckets.insert(index, tag: tag(of: bytes))
            return index
        }
    }

    /// The index of `key`'s entry, inserting a new one (as the most recently used) if there is
    /// none, with one hash lookup.
    mutating func indexInsertingIfAbsent(key: String, valueCount: Int) -> Int {
        return key.withUTF8Bytes { indexInsertingIfAbsent(key: $0, valueCount: valueCount).index }
    }

    /// The index of the entry whose key has these bytes, inserting a new one (as the most
    /// recently used) if there is none, and whether it was inserted. One hash, one probe.
    mutating func indexInsertingIfAbsent(
        key: UnsafeBufferPointer<UInt8>, valueCount: Int
    ) -> (index: Int, isNew: Bool) {
        indexInsertingIfAbsent(key: key, tag: tag(of: key), valueCount: valueCount)
    }

    /// ``indexInsertingIfAbsent(key:valueCount:)`` for a key whose ``tag(of:)`` the caller
    /// computed.
    mutating func indexInsertingIfAbsent(
        key: UnsafeBufferPointer<UInt8>, tag: UInt32, valueCount: Int
    ) -> (index: Int, isNew: Bool) {
        buckets.makeRoomForOneMore()
        let inline = InlineKey(key)
        switch buckets.probe(tag: tag, { record in keyMatches(record, key, inline) }) {
        case .found(let record):
            return (record, false)
        case .vacant(let bucket):
            // `place` leaves the buckets alone, so the bucket is still the probe's.
            let index = place(key: key, inline: inline, valueCount: valueCount)
            buckets.record(index, tag: tag, inBucket: bucket)
            return (index, true)
        }
    }

    /// Appends a committed entry as the most recently used one, for loading a whole index, with
    /// one probe of the hash table. Returns `false`, changing nothing, if the key is already in
    /// the table: a damaged or forged index, which the loader then discards.
    mutating func appendCommitted(key: String, lengths: SlotLengths, location: ValueLocation) -> Bool {
        return key.withUTF8Bytes { appendCommitted(key: $0, lengths: lengths, location: location) }
    }

    mutating func appendCommitted(
        key: UnsafeBufferPointer<UInt8>, lengths: SlotLengths, location: ValueLocation
    ) -> Bool {
        appendCommitted(key: key, tag: tag(of: key), lengths: lengths, location: location)
    }

    mutating func appendCommitted(
        key: UnsafeBufferPointer<UInt8>, tag: UInt32, lengths: SlotLengths, location: ValueLocation
    ) -> Bool {
        let (index, isNew) = indexInsertingIfAbsent(key: key, tag: tag, valueCount: lengths.count)
        guard isNew else { return false }
        setCommitted(index, lengths: lengths, location: location)
        return true
    }

    /// Stores a new entry in a free record (the last freed one, or a new one at the end) and
    /// links it as the newest, without touching the hash table. The key goes in the record if it
    /// has an `inline` form, else in the arena.
    private mutating func place(key: UnsafeBufferPointer<UInt8>, inline: InlineKey?, valueCount: Int) -> Int {
        var record = EntryRecord()
        if let inline {
            record.setKey(inline, length: key.count)
        } else {
            let arenaCapacity = arena.capacity
            record.setKey(offset: arena.append(key), length: key.count)
            if arena.capacity != arenaCapacity { noteGrowth(freedBytes: arenaCapacity) }
        }
        record.flags = .live
        if !record.setInlineLengths(SlotLengths(repeating: 0, count: valueCount)) {
            record.flags.insert(.spilledLengths)
        }
        record.previous = newestRecord
        let index: Int
        if freeHead != EntryRecord.none {
            index = Int(freeHead)
            freeHead = records[index].next
            records[index] = record
        } else {
            index = records.count
            let grows = records.count == records.capacity
            records.append(record)
            recordsFaultAhead.advance(&records)
            if grows { noteGrowth(freedBytes: index &* MemoryLayout<EntryRecord>.stride) }
        }
        if record.flags.contains(.spilledLengths) {
            spilledLengths[index] = SlotLengths(repeating: 0, count: valueCount)
        }
        if newestRecord != EntryRecord.none {
            records[Int(newestRecord)].next = Self.link(index)
        } else {
            eldestRecord = Self.link(index)
        }
        newestRecord = Self.link(index)
        count &+= 1
        keyBytes &+= key.count
        return index
    }

    /// Marks the entry committed with `lengths` at `location`, with no editor, in one update.
    mutating func setCommitted(
        _ index: Int, lengths: SlotLengths, location: ValueLocation = .none, sequenceNumber: UInt64 = 0
    ) {
        assert(isLive(slot: index), "EntryTable: no live entry at index \(index)")
        var record = records[index]
        if !record.isReadable { readableCount &+= 1 }
        if record.isEditing { editors[index] = nil }
        record.flags.subtract([.editing, .dirtyJournaled])
        record.flags.insert(.readable)
        record.sequenceNumber = sequenceNumber
        store(lengths, in: &record, at: index)
        store(location, in: &record, at: index)
        records[index] = record
    }

    /// Removes the entry at `index` and returns what it was.
    @discardableResult
    mutating func remove(at index: Int) -> Entry {
        guard isLive(slot: index) else {
            assertionFailure("EntryTable: no live entry to remove at index \(index)")
            return Entry(lengths: [])
        }
        let entry = self[index]
        let record = records[index]
        unlink(index)
        // The tag first: `buckets` mutated inside `withKey` (which holds `self`) was copied whole.
        let keyTag = withKey(at: index) { self.tag(of: $0) }
        buckets.remove(index, tag: keyTag)
        if !record.hasInlineKey { arena.release(length: record.keyLength) }
        if entry.isReadable { readableCount &-= 1 }
        if record.isEditing { editors[index] = nil }
        if record.flags.contains(.spilledLengths) { spilledLengths[index] = nil }
        if record.flags.contains(.spilledOffset) { spilledOffsets[index] = nil }
        var free = EntryRecord()
        free.next = freeHead
        records[index] = free
        freeHead = Self.link(index)
        count &-= 1
        keyBytes &-= record.keyLength
        if arena.needsCompaction { reclaimKeys() }
        return entry
    }

    /// Hands the pages of an array the index outgrew back to the system, once it is large
    /// (see ``HeapMemory``): at most once per doubling of an array.
    private func noteGrowth(freedBytes: Int) {
        if freedBytes >= HeapMemory.threshold { HeapMemory.returnToSystem() }
    }

    /// Marks the entry as the most recently used.
    mutating func touch(_ index: Int) {
        let link = Self.link(index)
        guard newestRecord != link, isLive(slot: index) else { return }
        unlink(index)
        records[index].previous = newestRecord
        if newestRecord != EntryRecord.none {
            records[Int(newestRecord)].next = link
        } else {
            eldestRecord = link
        }
        newestRecord = link
    }

    private mutating func unlink(_ index: Int) {
        let record = records[index]
        if record.previous != EntryRecord.none {
            records[Int(record.previous)].next = record.next
        } else {
            eldestRecord = record.next
        }
        if record.next != EntryRecord.none {
            records[Int(record.next)].previous = record.previous
        } else {
            newestRecord = record.previous
        }
        records[index].previous = EntryRecord.none
        records[index].next = EntryRecord.none
    }

    mutating func setReadable(_ index: Int, _ isReadable: Bool) {
        guard records[index].isReadable != isReadable else { return }
        if isReadable {
            records[index].flags.insert(.readable)
            readableCount &+= 1
        } else {
            records[index].flags.remove(.readable)
            readableCount &-= 1
        }
    }

    mutating func removeAll() {
        self = EntryTable()
    }
}
