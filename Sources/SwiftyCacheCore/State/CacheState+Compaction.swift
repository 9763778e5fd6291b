/// Compaction of packed storage, under the cache lock one record at a time: which live records
/// a segment holds, copying one to the active segment with its `MOVE` line, and deleting the
/// segment once everything live has left it. The copying itself (reading the record) happens
/// outside the lock; see `DiskLRUCache.compactSegments(untilClean:)`.
extension CacheState {
    /// A record compaction will copy: the entry's key, where its record is and its lengths.
    struct RecordToMove {
        var key: String
        var location: ValueLocation
        var lengths: SlotLengths
    }

    /// The live records of `segment` among the index slots from `cursor`, at most `limit`
    /// slots looked at; returns them and the next cursor (`nil` once every slot was seen).
    ///
    /// - Complexity: O(limit): the lock is held for one batch, never for the whole index.
    func recordsToMove(from segment: UInt32, cursor: Int, limit: Int) -> (records: [RecordToMove], next: Int?) {
        var records: [RecordToMove] = []
        let end = min(table.slotCount, cursor + limit)
        for slot in cursor..<end {
            guard let entry = table.entry(inSlot: slot), entry.isReadable, entry.location.segment == segment else {
                continue
            }
            records.append(RecordToMove(key: table.key(at: slot), location: entry.location, lengths: entry.lengths))
        }
        return (records, end < table.slotCount ? end : nil)
    }

    /// Copies one record (read and checked outside the lock; `nil` when it was damaged) to the
    /// active segment and journals `MOVE`, unless the entry changed meanwhile (then its old
    /// record is garbage already). A damaged record's entry is dropped.
    ///
    /// - Complexity: one `write` of the record.
    mutating func moveRecord(_ move: RecordToMove, record: RecordBytes?, in storage: any CompactingStorage)
        throws(CacheError)
    {
        guard let index = table.index(of: move.key), table[index].isReadable, table.location(index) == move.location
        else { return }
        guard let record else {
            dropDamagedEntry(index)
            return
        }
        let location = try storage.append(record.bytes, key: move.key)
        storage.noteMoved(from: move.location, to: location, size: Int64(record.count))
        table.setLocation(index, location)
        journal.append(.move(location), key: move.key)
        redundantOpCount += 1
    }

    /// Ends the compaction of `segment`: the `MOVE` lines, and every line and record that
    /// superseded the segment's other records, reach stable storage before the segment is
    /// deleted, with or without `syncsWrites` (once per compacted segment): a power cut then
    /// never finds a journal naming records in a segment that is gone.
    mutating func finishCompaction(of segment: UInt32, in storage: any CompactingStorage) throws(CacheError) {
        if journal.logsRecords, records != nil {
            journal.append(.tail(logTailPosition), key: logTailKey)
        }
        try journal.flush(operation: .compact)
        try storage.makeDurable(operation: .compact)
        try journal.sync(operation: .compact, key: nil)
        storage.retire(segment)
        statistics.compactedSegmentCount += 1
    }
}
