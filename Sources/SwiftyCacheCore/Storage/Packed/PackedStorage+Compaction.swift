#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Packed storage's half of compaction: accounting of live and garbage bytes, the segment to
/// compact, durability before a segment is deleted, and retiring it.
extension PackedStorage {
    /// The number of segments known (for bounding a compaction pass).
    var segmentCount: Int { state.withLock { $0.recordBytes.count } }
    var sharedFileCount: Int { segmentCount }
    var liveBytes: Int64 { usage.live }

    /// Garbage bytes in the segments, and live ones.
    var usage: (records: Int64, live: Int64) {
        state.withLock { ($0.totalRecordBytes, $0.totalLiveBytes) }
    }

    /// Whether garbage exceeds half the live bytes by more than half a segment (of the size the
    /// active one rolls at: a small cache's `maxSize` scales it down, a large cache's live bytes
    /// up, to a sixteenth of them): compaction keeps allocated disk within about 1.5 × the live
    /// bytes plus one segment. Less garbage costs
    /// more copying under random churn (docs/PERFORMANCE.md, "Footprint").
    var needsCompaction: Bool {
        guard !isReadOnly else { return false }
        let (records, live) = usage
        return records - live > live / 2 + rollSize(liveBytes: live) / 2 && compactionCandidate() != nil
    }

    /// Whether garbage is half a segment past what ``needsCompaction`` allows: the background
    /// compaction fell behind the writes. In a directory within its budget (``SizeBudget``)
    /// writers then compact before they return (backpressure).
    var isCompactionOverdue: Bool {
        guard !isReadOnly else { return false }
        let (records, live) = usage
        return records - live > live / 2 + rollSize(liveBytes: live) && compactionCandidate() != nil
    }

    /// The directory, not only the values (``SizeBudget``): each entry is charged its record's
    /// header and journal line, and room is left for garbage up to the threshold above.
    var sizeBudget: SizeBudget {
        // A record's header (its checksum and slot lengths), and a journal line's fixed part.
        SizeBudget(
            entryOverhead: PackedRecord.headerSize(valueCount: valueCount) &+ 16, chargesKeys: true,
            segmentSize: Int(clamping: smallestSegmentSize))
    }

    /// The sealed segment with the most garbage, if it has any; the active segment is sealed
    /// first when it is the one.
    func compactionCandidate(sealingActive: Bool = false) -> UInt32? {
        state.withLock { segments -> UInt32? in
            let garbage = segments.recordBytes.compactMap { number, bytes -> (UInt32, Int64)? in
                segments.busyElsewhere.contains(number) ? nil : (number, bytes - (segments.liveBytes[number] ?? 0))
            }
            guard let best = garbage.filter({ $0.1 > 0 }).max(by: { $0.1 < $1.1 }) else { return nil }
            if let active = segments.active, best.0 == active.number {
                guard sealingActive else { return nil }
                if isShared { try? fileSystem.advisoryLock(active.fd, .unlocked) }
                segments.endActive()
            }
            return best.0
        }
    }

    /// Forces every segment written since its last sync, and the directory when a segment was
    /// created since, to stable storage: before a journal that names their records replaces
    /// the old one, and before a segment whose records they supersede is deleted. Without
    /// ``syncsWrites`` this is the only sync, once per journal rebuild or compacted segment.
    ///
    /// - Complexity: one `fsync` per segment written since the last call (usually one).
    func makeDurable(operation: CacheError.Operation) throws(CacheError) {
        let (pending, directoryPending) = state.withLock { segments in
            // Sharing: the records that supersede others' may be in any cache's segments.
            if isShared { segments.unsynced.formUnion(segments.recordBytes.keys) }
            defer {
                segments.unsynced.removeAll()
                segments.directoryUnsynced = false
                segments.isActiveUnsynced = false
            }
            return (segments.unsynced.sorted(), segments.directoryUnsynced)
        }
        var failed: [UInt32] = []
        var failure: CacheError?
        for number in pending {
            do {
                try syncSegment(number)
            } catch {
                failed.append(number)
                failure = failure ?? CacheError.ioFailure(error, operation: operation, path: segmentPath(number))
            }
        }
        if directoryPending && failure == nil {
            do {
                try directory.sync()
            } catch {
                failure = CacheError.ioFailure(error, operation: operation, path: directory.path)
            }
        }
        guard let failure else { return }
        // Still to be synced by the next call.
        state.withLock { segments in
            for number in failed where !segments.retired.contains(number) {
                segments.unsynced.insert(number)
                if number == segments.active?.number { segments.isActiveUnsynced = true }
            }
            segments.directoryUnsynced = segments.directoryUnsynced || directoryPending
        }
        throw failure
    }

    /// Forces segment `number` to stable storage, through its open descriptor or, when it was
    /// closed to stay under the descriptor limit, one opened for the call (a sync covers the
    /// file, whichever descriptor wrote it). A segment deleted meanwhile has nothing to sync.
    ///
    /// - Complexity: one `fsync` (and an `open` and `close` for a segment not kept open).
    func syncSegment(_ number: UInt32) throws(SystemCallFailure) {
        let open = state.withLock { segments in
            segments.active?.number == number ? segments.active : segments.lookUp(number)
        }
        if let open { return try fileSystem.fsync(open.fd) }
        let fd: Int32
        do {
            fd = try fileSystem.open(segmentPath(number), flags: OpenFlags.readOnly, mode: 0)
        } catch  where error.errno == Errno.noEntry {
            return
        }
        defer { try? fileSystem.close(fd) }
        try fileSystem.fsync(fd)
    }

    /// Accounts for a record copied from `old` to `new` by compaction.
    func noteMoved(from old: ValueLocation, to new: ValueLocation, size: Int64) {
        state.withLock { segments in
            segments.addLiveBytes(-size, in: old.segment)
            segments.addLiveBytes(size, in: new.segment)
        }
    }

    /// Deletes a segment whose live records were all copied out; readers that hold it open
    /// still read it until they let go. One whose header is damaged is only forgotten.
    func retire(_ number: UInt32) {
        let isOwn = state.withLock { segments in
            if let claim = segments.claims.removeValue(forKey: number) { try? fileSystem.close(claim) }
            segments.forget(number)
            segments.retired.insert(number)
            return segments.foreign.remove(number) == nil
        }
        if isOwn { try? fileSystem.unlink(segmentPath(number)) }
    }
}
