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

    /// Indices of live entries in storage order, which is not LRU order.
    /// - Complexity: O(capacity), and an array of n indices.
    var indicesInStorageOrder: [Int] { records.indices.filter { records[$0].isLive } }

    /// The entries an editor holds, in storage order.
    /// - Complexity: O(k log k) in the k entries being edited, not O(n).
    var indicesBeingEdited: [Int] { editors.keys.sorted() }
}
