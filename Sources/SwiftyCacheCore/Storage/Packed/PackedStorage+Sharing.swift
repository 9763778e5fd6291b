/// Packed storage where other caches write the directory too (``DiskLRUCache/Sharing``):
/// accounting for their records as their journal lines are read, and the claim that keeps
/// compaction away from a segment some cache still appends to.
extension PackedStorage {
    /// Appends the record of a commit to this cache's active segment before the operation
    /// lock is taken: the segment is this cache's alone (its `flock` keeps the others'
    /// compaction away), and no journal line names the record until the commit's, written
    /// under the lock; so two caches write their records at once, and hold the lock only for
    /// a journal line. A record whose commit then fails (or whose cache is killed before it)
    /// is garbage, as a torn one is: only a log's scan adopts a record no line names, and a
    /// shared directory is never a log. Returns `nil`, having written nothing, when the record
    /// does not fit the active segment (naming a new one takes the lock) or there is none.
    ///
    /// - Complexity: one `write` (plus `fdatasync` with ``syncsWrites``).
    func appendBeforeOperationLock(_ record: [UInt8], key: String) throws(CacheError) -> ValueLocation? {
        try state.withLock { (segments) throws(CacheError) -> ValueLocation? in
            guard isShared, segments.logIdentity == nil, segments.active != nil,
                segments.activeEnd + Int64(record.count) <= rollSize(liveBytes: segments.totalLiveBytes)
            else { return nil }
            return try appendLocked(&segments, record, key: key, syncs: syncsWrites)
        }
    }

    func noteOthersRecord(at location: ValueLocation, size: Int64, replacing: (location: ValueLocation, size: Int64)?) {
        state.withLock { segments in
            if location.segment != 0 {
                noteKnown(location.segment, through: location.offset &+ size, in: &segments)
                segments.addLiveBytes(size, in: location.segment)
            }
            if let replacing, replacing.location.segment != 0 {
                segments.addLiveBytes(-replacing.size, in: replacing.location.segment)
            }
        }
    }

    func noteOthersRelease(at location: ValueLocation, size: Int64) {
        guard location.segment != 0 else { return }
        state.withLock { $0.addLiveBytes(-size, in: location.segment) }
    }

    /// Counts the bytes of segment `number` up to `end` as written (garbage or live), the
    /// furthest record of it a journal line names: another cache's segment grows as it
    /// appends. A segment seen for the first time means its writer moved on from the one
    /// before: the segments found busy are tried again.
    private func noteKnown(_ number: UInt32, through end: Int64, in segments: inout Segments) {
        let known = segments.recordBytes[number]
        if known == nil { segments.busyElsewhere.removeAll() }
        let written = end - Int64(Self.segmentHeader.count)
        if written > (known ?? 0) { segments.addRecordBytes(written - (known ?? 0), in: number) }
        if number >= segments.nextNumber { segments.nextNumber = number &+ 1 }
        // A number this cache retired, taken again by another cache's new segment.
        if segments.retired.remove(number) != nil { segments.forgetOpen(number) }
    }

    /// Claims segment `number` for compaction: an exclusive `flock` on a descriptor of its
    /// own, which fails while the cache that appends to it holds its lock (see `roll`). Where
    /// nobody else writes, every segment but the active one may be compacted.
    ///
    /// - Complexity: an `open` and a `flock`, once per segment compacted.
    func claimForCompaction(_ number: UInt32) -> Bool {
        guard isShared else { return true }
        if state.withLock({ $0.claims[number] != nil }) { return true }
        let fd: Int32
        do {
            fd = try fileSystem.open(segmentPath(number), flags: OpenFlags.readOnly, mode: 0)
        } catch {
            // Another cache compacted it away: nothing of it is left to count. Otherwise it is
            // passed by as busy.
            state.withLock { segments in
                if error.errno == Errno.noEntry {
                    segments.forget(number)
                } else {
                    segments.busyElsewhere.insert(number)
                }
            }
            return false
        }
        do {
            try fileSystem.advisoryLock(fd, .exclusive)
        } catch {
            try? fileSystem.close(fd)
            state.withLock { _ = $0.busyElsewhere.insert(number) }
            return false
        }
        state.withLock { $0.claims[number] = fd }
        return true
    }

    /// Whether segment `number` was known by a file that is no longer the one its name holds
    /// (or by no file: retired here, then created again by another cache); if so it is
    /// forgotten, and the next read opens the file the name holds.
    ///
    /// - Complexity: an `fstat` and an `lstat`, on a read that failed only.
    func forgetStaleSegment(_ number: UInt32) -> Bool {
        guard let current = try? fileSystem.status(atPath: segmentPath(number)) else { return false }
        return state.withLock { segments in
            if segments.retired.remove(number) != nil { return true }
            guard let open = segments.lookUp(number),
                (try? fileSystem.status(of: open.fd))?.identity != current.identity
            else { return false }
            segments.forgetOpen(number)
            return true
        }
    }

    func releaseClaims() {
        let claims = state.withLock { segments in
            defer { segments.claims.removeAll() }
            return Array(segments.claims.values)
        }
        for fd in claims { try? fileSystem.close(fd) }
    }

    /// - Complexity: O(entries).
    func relearn(table: EntryTable) {
        var live: [UInt32: Int64] = [:]
        var ends: [UInt32: Int64] = [:]
        for slot in 0..<table.slotCount {
            guard let (location, lengths) = table.committedValues(inSlot: slot), location.segment != 0 else { continue }
            let size = recordSize(lengths: lengths)
            live[location.segment, default: 0] &+= size
            ends[location.segment] = max(ends[location.segment] ?? 0, location.offset &+ size)
        }
        state.withLock { segments in
            for number in Array(segments.liveBytes.keys) {
                segments.addLiveBytes(-(segments.liveBytes[number] ?? 0), in: number)
            }
            for (number, bytes) in live { segments.addLiveBytes(bytes, in: number) }
            for (number, end) in ends { noteKnown(number, through: end, in: &segments) }
        }
    }
}
