/// One cache entry as the index knows it.
struct Entry {
    var key: String
    /// The committed length of each slot, in bytes.
    var lengths: [Int]
    /// Whether the entry has been committed at least once (a `CLEAN` line).
    var isReadable = false
    /// The editor holding the entry, `0` when none does.
    var editorID: UInt64 = 0
    /// Changes on every successful commit; a snapshot can only be edited while it matches.
    var sequenceNumber: UInt64 = 0
    fileprivate var previous = -1
    fileprivate var next = -1

    var isBeingEdited: Bool { editorID != 0 }
    var totalLength: Int { lengths.reduce(0, +) }
}

/// The index: entries by key, threaded on a doubly linked list in least-recently-used order.
///
/// Entries live in a slab (`nodes`) so that the list needs no reference counting; `free`
/// recycles the slots of removed entries.
///
/// - Complexity: lookup, insert, remove and touch are O(1) amortized.
struct EntryTable {
    private var nodes: [Entry] = []
    private var free: [Int] = []
    private var indexByKey: [String: Int] = [:]
    /// The least recently used entry, `-1` when empty.
    private(set) var eldest = -1
    /// The most recently used entry, `-1` when empty.
    private(set) var newest = -1
    /// How many entries have been committed (editors of new entries are not counted).
    private(set) var readableCount = 0

    /// All entries, committed or being created.
    var count: Int { indexByKey.count }

    func index(of key: String) -> Int? { indexByKey[key] }

    subscript(_ index: Int) -> Entry {
        get { nodes[index] }
    }

    /// Inserts a new entry as the most recently used one and returns its index.
    mutating func insert(key: String, valueCount: Int) -> Int {
        let entry = Entry(key: key, lengths: Array(repeating: 0, count: valueCount))
        let index: Int
        if let reused = free.popLast() {
            nodes[reused] = entry
            index = reused
        } else {
            nodes.append(entry)
            index = nodes.count - 1
        }
        indexByKey[key] = index
        linkAsNewest(index)
        return index
    }

    /// Removes the entry at `index` and returns it.
    @discardableResult
    mutating func remove(at index: Int) -> Entry {
        let entry = nodes[index]
        unlink(index)
        indexByKey[entry.key] = nil
        if entry.isReadable { readableCount -= 1 }
        nodes[index].lengths = []
        nodes[index].key = ""
        free.append(index)
        return entry
    }

    /// Marks the entry as the most recently used.
    mutating func touch(_ index: Int) {
        guard newest != index else { return }
        unlink(index)
        linkAsNewest(index)
    }

    mutating func setReadable(_ index: Int, _ isReadable: Bool) {
        guard nodes[index].isReadable != isReadable else { return }
        nodes[index].isReadable = isReadable
        readableCount += isReadable ? 1 : -1
    }

    mutating func setLengths(_ index: Int, _ lengths: [Int]) { nodes[index].lengths = lengths }
    mutating func setLength(_ index: Int, slot: Int, _ length: Int) { nodes[index].lengths[slot] = length }
    mutating func setEditor(_ index: Int, _ editorID: UInt64) { nodes[index].editorID = editorID }
    mutating func setSequenceNumber(_ index: Int, _ number: UInt64) { nodes[index].sequenceNumber = number }

    /// The index of the entry after `index` in LRU order (towards the newest), `-1` at the end.
    func indexAfter(_ index: Int) -> Int { nodes[index].next }

    /// Indices from least to most recently used.
    /// - Complexity: O(n).
    var indicesInLRUOrder: [Int] {
        var result: [Int] = []
        result.reserveCapacity(count)
        var cursor = eldest
        while cursor != -1 {
            result.append(cursor)
            cursor = nodes[cursor].next
        }
        return result
    }

    mutating func removeAll() {
        self = EntryTable()
    }

    private mutating func unlink(_ index: Int) {
        let previous = nodes[index].previous
        let next = nodes[index].next
        if previous != -1 { nodes[previous].next = next } else { eldest = next }
        if next != -1 { nodes[next].previous = previous } else { newest = previous }
        nodes[index].previous = -1
        nodes[index].next = -1
    }

    private mutating func linkAsNewest(_ index: Int) {
        nodes[index].previous = newest
        nodes[index].next = -1
        if newest != -1 { nodes[newest].next = index } else { eldest = index }
        newest = index
    }
}
