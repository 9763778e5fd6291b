extension EntryTable {
    /// Checks that the records, their LRU links, the free list, the hash table, the key arena,
    /// the side tables and the counts agree. Returns the first violation, `nil` when there is
    /// none.
    ///
    /// - Complexity: O(records + buckets + arena).
    func invariantViolation() -> String? {
        if let problem = linkViolation() { return problem }
        var live = 0
        var readable = 0
        var keyBytes = 0
        var allKeyBytes = 0
        for index in records.indices where records[index].isLive {
            let record = records[index]
            live += 1
            allKeyBytes += record.keyLength
            if record.isReadable { readable += 1 }
            if record.hasInlineKey {
                guard withKey(at: index, { InlineKey($0) }) == record.inlineKey else {
                    return "record \(index) holds a key inline that has no inline form, or another one"
                }
            } else {
                guard record.keyOffset + record.keyLength <= arena.count else {
                    return "the key of record \(index) ends past the arena"
                }
                guard withKey(at: index, { InlineKey($0) }) == nil else {
                    return "the key of record \(index) is in the arena but has an inline form"
                }
                keyBytes += KeyArena.prefixSize(record.keyLength) + record.keyLength
            }
            let found = withKey(at: index) { self.index(ofKey: $0) }
            guard found == index else {
                return "the key of record \(index) leads to \(found.map(String.init) ?? "nothing")"
            }
            guard record.isEditing == (editors[index] != nil) else { return "record \(index) and the editors disagree" }
            guard record.flags.contains(.spilledLengths) == (spilledLengths[index] != nil) else {
                return "record \(index) and the spilled lengths disagree"
            }
            guard record.flags.contains(.spilledOffset) == (spilledOffsets[index] != nil) else {
                return "record \(index) and the spilled offsets disagree"
            }
        }
        guard live == count else { return "\(live) records are live, the count says \(count)" }
        guard allKeyBytes == self.keyBytes else {
            return "the keys take \(allKeyBytes) bytes, keyBytes says \(self.keyBytes)"
        }
        guard readable == readableCount else {
            return "readableCount is \(readableCount) but \(readable) entries are readable"
        }
        guard keyBytes + arena.garbage == arena.count else {
            return
                "the arena holds \(arena.count) bytes: \(keyBytes) of live keys and \(arena.garbage) counted as garbage"
        }
        let sideRecords = Array(editors.keys) + Array(spilledLengths.keys) + Array(spilledOffsets.keys)
        if let stray = sideRecords.first(where: { !isLive(slot: $0) }) {
            return "a side table names free record \(stray)"
        }
        return buckets.invariantViolation { record in
            guard isLive(slot: record) else { return nil }
            return withKey(at: record) { tag(of: $0) }
        }
    }

    /// The LRU walk visits every live record once with consistent back links and ends at the
    /// newest; the free list holds every other record.
    private func linkViolation() -> String? {
        var visited = 0
        var previous = EntryRecord.none
        var cursor = eldestRecord
        while cursor != EntryRecord.none {
            guard visited < records.count else { return "the LRU list has a cycle" }
            let index = Int(cursor)
            guard index < records.count, records[index].isLive else { return "the LRU list reaches a free record" }
            guard records[index].previous == previous else { return "a backward link is wrong at \(index)" }
            visited += 1
            previous = cursor
            cursor = records[index].next
        }
        guard previous == newestRecord else { return "the LRU walk does not end at the newest entry" }
        guard visited == count else { return "the LRU list holds \(visited) entries, the count says \(count)" }
        var free = 0
        cursor = freeHead
        while cursor != EntryRecord.none {
            guard free < records.count, Int(cursor) < records.count, !records[Int(cursor)].isLive else {
                return "the free list reaches a live record or loops"
            }
            free += 1
            cursor = records[Int(cursor)].next
        }
        guard visited + free == records.count else { return "records are neither live nor free" }
        return nil
    }
}
