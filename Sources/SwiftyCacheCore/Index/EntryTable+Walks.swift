/// Walks over the whole index, in LRU or storage order.
extension EntryTable {
    /// The index of the entry after `index` in LRU order (towards the newest), `-1` at the end.
    func indexAfter(_ index: Int) -> Int { isLive(slot: index) ? Self.index(records[index].next) : -1 }

    /// Indices from least to most recently used.
    /// - Complexity: O(n), and an array of n indices.
    var indicesInLRUOrder: [Int] {
        var result: [Int] = []
        result.reserveCapacity(count)
        var cursor = eldest
        while cursor != -1 {
            result.append(cursor)
            cursor = indexAfter(cursor)
        }
        return result
    }

    /// The records from least to most recently used, 4 bytes each: what a journal rebuild
    /// keeps of the index while it writes (see ``JournalRebuild``).
    /// - Complexity: O(n).
    var recordsInLRUOrder: [UInt32] {
        var result: [UInt32] = []
        result.reserveCapacity(count)
        var cursor = eldestRecord
        while cursor != EntryRecord.none {
            result.append(cursor)
            cursor = records[Int(cursor)].next
        }
        return result
    }

    /// The indices of the `count` most recently used entries (fewer if there are not as
    /// many), the newest first.
    ///
    /// - Complexity: O(`count`).
    func newestIndices(_ count: Int) -> [Int] {
        var result: [Int] = []
        result.reserveCapacity(Swift.max(0, Swift.min(count, self.count)))
        var cursor = Self.index(newestRecord)
        while result.count < count, isLive(slot: cursor) {
            result.append(cursor)
            cursor = Self.index(records[cursor].previous)
        }
        return result
    }

    /// Indices of live entries in storage order, which is not LRU order.
    /// - Complexity: O(capacity), and an array of n indices.
    var indicesInStorageOrder: [Int] { records.indices.filter { records[$0].isLive } }

    /// The entries an editor holds, in storage order.
    /// - Complexity: O(k log k) in the k entries being edited, not O(n).
    var indicesBeingEdited: [Int] { editors.keys.sorted() }

    /// The number of slots, live or free: ``entry(inSlot:)`` walks them in bounded batches.
    var slotCount: Int { records.count }

    /// Whether `slot` holds an entry.
    func isLive(slot: Int) -> Bool { slot >= 0 && slot < records.count && records[slot].isLive }

    /// The entry in `slot`, `nil` for a free one.
    func entry(inSlot slot: Int) -> Entry? { isLive(slot: slot) ? self[slot] : nil }

    /// Where the committed entry in `slot` keeps its values, and their lengths; `nil` for a
    /// free slot or an entry never committed.
    func committedValues(inSlot slot: Int) -> (location: ValueLocation, lengths: SlotLengths)? {
        guard isLive(slot: slot), records[slot].isReadable else { return nil }
        let record = records[slot]
        return (location(of: record, at: slot), lengths(of: record, at: slot))
    }
}
