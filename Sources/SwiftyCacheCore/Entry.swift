/// One cache entry as the index knows it.
struct Entry {
    var key: String
    /// The committed length of each slot, in bytes.
    var lengths: [Int]
    /// Whether the entry has been committed at least once (a `CLEAN` line).
    var isReadable = false
    /// The editor holding the entry, `0` when none does.
    var editorID: UInt64 = 0
    /// Whether the current edit's `DIRTY` line is in the journal. One-shot writes
    /// (`setData`) journal it only when they commit, so that a crash while their values are
    /// written leaves the previous entry intact.
    var isDirtyJournaled = false
    /// Changes on every successful commit; a snapshot can only be edited while it matches.
    var sequenceNumber: UInt64 = 0

    var isBeingEdited: Bool { editorID != 0 }
    var totalLength: Int { lengths.reduce(0, +) }
}

/// The index: entries by key, in least-recently-used order, plus the count of committed ones.
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

    mutating func reserveCapacity(_ capacity: Int) { storage.reserveCapacity(capacity) }

    /// The entry at a live index (indices come from `index(of:)` or the LRU walk).
    subscript(_ index: Int) -> Entry {
        storage.value(at: index) ?? Entry(key: "", lengths: [])
    }

    /// The committed lengths of the entry at `index` if it is readable, read in place (no copy
    /// of the entry): the read path's one look at it.
    func readableLengths(_ index: Int) -> [Int]? {
        guard storage.values[index]?.isReadable == true else { return nil }
        return storage.values[index]?.lengths
    }

    /// The sequence number of the entry at `index`, read in place.
    func sequenceNumber(_ index: Int) -> UInt64 { storage.values[index]?.sequenceNumber ?? 0 }

    /// Inserts a new entry as the most recently used one and returns its index.
    mutating func insert(key: String, valueCount: Int) -> Int {
        storage.insert(Entry(key: key, lengths: Array(repeating: 0, count: valueCount)), forKey: key)
    }

    /// The index of `key`'s entry, inserting a new one (as the most recently used) if there is
    /// none, with one hash lookup.
    mutating func indexInsertingIfAbsent(key: String, valueCount: Int) -> Int {
        storage.indexInsertingIfAbsent(key) { Entry(key: key, lengths: Array(repeating: 0, count: valueCount)) }
    }

    /// Marks the entry committed with `lengths` and no editor, in one update.
    mutating func setCommitted(_ index: Int, lengths: [Int]) {
        let wasReadable = self[index].isReadable
        storage.update(at: index) {
            $0.editorID = 0
            $0.isReadable = true
            $0.lengths = lengths
        }
        if !wasReadable { readableCount += 1 }
    }

    /// Removes the entry at `index` and returns it.
    @discardableResult
    mutating func remove(at index: Int) -> Entry {
        let entry = storage.remove(at: index) ?? Entry(key: "", lengths: [])
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

    mutating func setLengths(_ index: Int, _ lengths: [Int]) { storage.update(at: index) { $0.lengths = lengths } }
    mutating func setLength(_ index: Int, slot: Int, _ length: Int) {
        storage.update(at: index) { $0.lengths[slot] = length }
    }
    mutating func setEditor(_ index: Int, _ editorID: UInt64) { storage.update(at: index) { $0.editorID = editorID } }
    mutating func setDirtyJournaled(_ index: Int, _ isJournaled: Bool) {
        storage.update(at: index) { $0.isDirtyJournaled = isJournaled }
    }
    mutating func setSequenceNumber(_ index: Int, _ number: UInt64) {
        storage.update(at: index) { $0.sequenceNumber = number }
    }

    /// The index of the entry after `index` in LRU order (towards the newest), `-1` at the end.
    func indexAfter(_ index: Int) -> Int { storage.indexAfter(index) }

    /// Indices from least to most recently used.
    /// - Complexity: O(n).
    var indicesInLRUOrder: [Int] { storage.indicesInLRUOrder }

    /// Indices of live entries in storage order, which is not LRU order.
    /// - Complexity: O(capacity), reading memory sequentially.
    var indicesInStorageOrder: [Int] { storage.indicesInStorageOrder }

    mutating func removeAll() {
        self = EntryTable()
    }
}
