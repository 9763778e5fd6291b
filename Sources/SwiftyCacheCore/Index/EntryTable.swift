/// The index: entries by key, in least-recently-used order, plus the count of committed ones.
///
/// Indices come from ``index(of:)`` or the LRU walk and stay valid until the entry is removed.
/// Using a stale one is a bug in the engine, never a consequence of input: debug builds assert.
///
/// - Complexity: lookup, insert, remove and touch are O(1) amortized.
struct EntryTable {
    private var storage = LRUDictionary<String, Entry>()
    /// How many entries have been committed (editors of new entries are not counted).
    private(set) var readableCount = 0

    /// All entries, committed or being created.
    var count: Int { storage.count }
    /// The least recently used entry, `-1` when empty.
    var eldest: Int { storage.eldest }

    func index(of key: String) -> Int? { storage.index(of: key) }

    /// Every key in the index, committed or being edited.
    /// - Complexity: O(n).
    var allKeys: Set<String> {
        var keys = Set<String>(minimumCapacity: count)
        for index in storage.indicesInStorageOrder {
            if let key = storage.key(at: index) { keys.insert(key) }
        }
        return keys
    }

    mutating func reserveCapacity(_ capacity: Int) { storage.reserveCapacity(capacity) }

    /// The entry at a live index.
    subscript(_ index: Int) -> Entry {
        guard let entry = storage.value(at: index) else {
            assertionFailure("EntryTable: no live entry at index \(index)")
            return Entry(key: "", lengths: [])
        }
        return entry
    }

    /// The committed lengths of the entry at `index` if it is readable, read in place (no copy
    /// of the entry): the read path's one look at it.
    func readableLengths(_ index: Int) -> SlotLengths? {
        guard storage.values[index]?.isReadable == true else { return nil }
        return storage.values[index]?.lengths
    }

    /// The sum of the lengths of the entry at `index`, read in place; `nil` if it overflows.
    func totalLength(_ index: Int) -> Int? { storage.values[index].map(\.lengths.total) ?? 0 }

    /// The sequence number of the entry at `index`, read in place.
    func sequenceNumber(_ index: Int) -> UInt64 { storage.values[index]?.sequenceNumber ?? 0 }

    /// Where the values of the entry at `index` are, read in place.
    func location(_ index: Int) -> ValueLocation { storage.values[index]?.location ?? .none }

    /// The number of slots, live or free: ``entry(inSlot:)`` walks them in bounded batches.
    var slotCount: Int { storage.values.count }

    /// The entry in `slot`, `nil` for a free one.
    func entry(inSlot slot: Int) -> Entry? { slot < storage.values.count ? storage.values[slot] : nil }

    /// Where the committed entry in `slot` keeps its values, and their lengths, read in place
    /// (no copy of the entry); `nil` for a free slot or an entry never committed.
    func committedValues(inSlot slot: Int) -> (location: ValueLocation, lengths: SlotLengths)? {
        guard slot < storage.values.count, storage.values[slot]?.isReadable == true,
            let location = storage.values[slot]?.location, let lengths = storage.values[slot]?.lengths
        else { return nil }
        return (location, lengths)
    }

    /// Records that the entry's values moved (compaction); not a use, not a new version.
    mutating func setLocation(_ index: Int, _ location: ValueLocation) {
        storage.update(at: index) { $0.location = location }
    }

    /// Inserts a new entry as the most recently used one and returns its index.
    mutating func insert(key: String, valueCount: Int) -> Int {
        storage.insert(Entry(key: key, lengths: SlotLengths(repeating: 0, count: valueCount)), forKey: key)
    }

    /// The index of `key`'s entry, inserting a new one (as the most recently used) if there is
    /// none, with one hash lookup.
    mutating func indexInsertingIfAbsent(key: String, valueCount: Int) -> Int {
        storage.indexInsertingIfAbsent(key) { Entry(key: key, lengths: SlotLengths(repeating: 0, count: valueCount)) }
    }

    /// Appends a committed entry as the most recently used one, for loading a whole index, with
    /// one probe of the hash table. Returns `false`, changing nothing, if the key is already in
    /// the table: a damaged or forged index, which the loader then discards.
    mutating func appendCommitted(key: String, lengths: SlotLengths, location: ValueLocation) -> Bool {
        let entry = Entry(key: key, lengths: lengths, location: location, isReadable: true)
        guard storage.insertIfAbsent(entry, forKey: key) != nil else { return false }
        readableCount += 1
        return true
    }

    /// Marks the entry committed with `lengths` at `location`, with no editor, in one update.
    mutating func setCommitted(
        _ index: Int, lengths: SlotLengths, location: ValueLocation = .none, sequenceNumber: UInt64 = 0
    ) {
        let wasReadable = self[index].isReadable
        let updated: Void? = storage.update(at: index) {
            $0.editorID = 0
            $0.isDirtyJournaled = false
            $0.isReadable = true
            $0.lengths = lengths
            $0.location = location
            $0.sequenceNumber = sequenceNumber
        }
        assert(updated != nil, "EntryTable: no live entry at index \(index)")
        if !wasReadable { readableCount += 1 }
    }

    /// Removes the entry at `index` and returns it.
    @discardableResult
    mutating func remove(at index: Int) -> Entry {
        guard let entry = storage.remove(at: index) else {
            assertionFailure("EntryTable: no live entry to remove at index \(index)")
            return Entry(key: "", lengths: [])
        }
        if entry.isReadable { readableCount -= 1 }
        return entry
    }

    /// Marks the entry as the most recently used.
    mutating func touch(_ index: Int) { storage.touch(index) }

    mutating func setReadable(_ index: Int, _ isReadable: Bool) {
        guard self[index].isReadable != isReadable else { return }
        storage.update(at: index) { $0.isReadable = isReadable }
        readableCount += isReadable ? 1 : -1
    }

    mutating func setLengths(_ index: Int, _ lengths: SlotLengths) {
        storage.update(at: index) { $0.lengths = lengths }
    }
    mutating func setEditor(_ index: Int, _ editorID: UInt64) { storage.update(at: index) { $0.editorID = editorID } }
    mutating func setDirtyJournaled(_ index: Int, _ isJournaled: Bool) {
        storage.update(at: index) { $0.isDirtyJournaled = isJournaled }
    }

    /// The index of the entry after `index` in LRU order (towards the newest), `-1` at the end.
    func indexAfter(_ index: Int) -> Int { storage.indexAfter(index) }

    /// Indices from least to most recently used.
    /// - Complexity: O(n).
    var indicesInLRUOrder: [Int] { storage.indicesInLRUOrder }

    /// Indices of live entries in storage order, which is not LRU order.
    /// - Complexity: O(capacity), reading memory sequentially.
    var indicesInStorageOrder: [Int] { storage.indicesInStorageOrder }

    /// Checks that the dictionary, its LRU links and the readable count agree. Returns the
    /// first violation, `nil` when there is none.
    ///
    /// - Complexity: O(n).
    func invariantViolation() -> String? {
        if let problem = storage.invariantViolation() { return problem }
        var readable = 0
        for index in storage.indicesInStorageOrder {
            guard let entry = storage.value(at: index) else { return "no value at live index \(index)" }
            guard storage.index(of: entry.key) == index else { return "entry \(entry.key) is not at its index" }
            if entry.isReadable { readable += 1 }
        }
        guard readable == readableCount else {
            return "readableCount is \(readableCount) but \(readable) entries are readable"
        }
        return nil
    }

    mutating func removeAll() {
        self = EntryTable()
    }
}
