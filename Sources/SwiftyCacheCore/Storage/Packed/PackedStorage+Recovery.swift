#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Packed storage's deletions, and what it learns and deletes when a cache opens and closes.
extension PackedStorage {
    /// Marks the record as garbage and deletes the files of large slots.
    func delete(key: String, location: ValueLocation, lengths: SlotLengths) -> Bool {
        if location.segment != 0 {
            let size = recordSize(lengths: lengths)
            state.withLock { $0.addLiveBytes(-size, in: location.segment) }
        }
        var deletedAll = true
        for slot in 0..<valueCount where isFileSlot(slot, location: location, lengths: lengths) {
            do { try files.removeValueFileIfPresent(key, slot, temporary: false) } catch { deletedAll = false }
        }
        return deletedAll
    }

    func deleteEverything(of key: String) -> Bool { files.deleteEverything(of: key) }

    func deletesWithoutJournal(location: ValueLocation, lengths: SlotLengths) -> Bool { location.segment == 0 }

    // MARK: Opening and closing

    /// Learns which segments hold live records, deletes those that hold none (or all of them
    /// with `wipe`), and, after a clean close, goes on appending to the last one.
    ///
    /// - Complexity: O(entries + files in the directory).
    func recover(table: EntryTable, wipe: Bool, closedCleanly: Bool) {
        guard !isReadOnly else { return }
        // A segment whose creation was interrupted (or whose staging name outlived a failed
        // unlink): the name is the cache's own.
        try? fileSystem.removeFileIfPresent(directory.newSegmentPath)
        let names = (try? fileSystem.contentsOfDirectory(directory.path)) ?? []
        let numbers = names.compactMap { name -> UInt32? in
            guard case .segment(let number) = CacheFileName(name) else { return nil }
            return number
        }.sorted()
        let live = wipe ? [:] : liveBytesBySegment(in: table, present: numbers)
        let totalLive = live.values.reduce(0, +)
        var dead: [String] = []
        var kept: [UInt32] = []
        state.withLock { segments in
            segments = Segments(openLimit: openSegmentLimit)
            segments.nextNumber = (numbers.last ?? 0) &+ 1
            for number in numbers {
                let path = segmentPath(number)
                // Sharing: every session appends to segments it created and locks.
                let isLast = number == numbers.last && closedCleanly && live[number] != nil && !isShared
                let flags = isLast ? OpenFlags.appendSegment : OpenFlags.readOnly
                // Only a file with the segment header is the cache's: anything else stays.
                guard let fd = try? fileSystem.open(path, flags: flags, mode: 0) else { continue }
                let segment = SegmentFile(number: number, fd: fd, fileSystem: fileSystem)
                // Without the header the file is not provably the cache's: it stays, whatever it
                // holds (a crash can tear only `journal.segment.tmp`, see `roll`).
                let isOwn = segment.hasValidHeader()
                // A segment the journal names whose header is damaged still serves its records
                // (each checks itself); it is never deleted, as it is not provably the cache's.
                guard isOwn || (live[number] != nil && segment.isRegularFile()),
                    let size = try? fileSystem.size(of: fd)
                else { continue }
                guard let bytes = live[number] else {
                    dead.append(path)
                    continue
                }
                if !isOwn { segments.foreign.insert(number) }
                kept.append(number)
                segments.addRecordBytes(size - Int64(Self.segmentHeader.count), in: number)
                segments.addLiveBytes(bytes, in: number)
                if isOwn && flags == OpenFlags.appendSegment && size < rollSize(liveBytes: totalLive) {
                    // Every byte of it was written by a session that closed cleanly.
                    segments.active = segment
                    segments.activeEnd = size
                }
                // Past the limit, the least recently opened is closed again: a cache of a
                // thousand segments opens under a small descriptor limit.
                segments.insertOpen(segment)
            }
        }
        if !deleteDeadSegments(dead, afterSyncing: wipe ? [] : kept) {
            // What an earlier session wrote may not be on disk yet: the first rebuild or
            // compaction of this session syncs it before replacing anything.
            state.withLock { segments in
                segments.unsynced.formUnion(kept)
                segments.isActiveUnsynced = segments.active != nil
            }
        }
    }

    /// The bytes of live records in each segment the index names.
    ///
    /// - Complexity: O(entries).
    private func liveBytesBySegment(in table: EntryTable, present numbers: [UInt32]) -> [UInt32: Int64] {
        // Summed in an array indexed by segment number, over the numbers of the segments in
        // the directory (sorted): a table loaded in LRU order alternates between segments
        // entry by entry, and a dictionary update per entry was a twentieth of an open. A
        // record in a segment outside that range (gone, or numbers spread wider than the
        // entries, which no cache of ours leaves) is summed in the dictionary.
        var live: [UInt32: Int64] = [:]
        let lowest = numbers.first ?? 0
        let span = numbers.last.map { Int($0 &- lowest) &+ 1 } ?? 0
        var sums = [Int64](repeating: -1, count: span <= max(table.slotCount, 1 << 12) &* 2 ? span : 0)
        for slot in 0..<table.slotCount {
            guard let (location, lengths) = table.committedValues(inSlot: slot), location.segment != 0 else {
                continue
            }
            let size = recordSize(lengths: lengths)
            let index = Int(location.segment) &- Int(lowest)
            if index >= 0, index < sums.count {
                sums[index] = max(sums[index], 0) &+ size
            } else {
                live[location.segment, default: 0] &+= size
            }
        }
        for (index, bytes) in sums.enumerated() where bytes >= 0 { live[lowest &+ UInt32(index)] = bytes }
        return live
    }

    /// Deletes the segments no journal line names any more, once the journal and the segments
    /// kept (which hold the records that superseded theirs) are on stable storage: after a kill,
    /// the lines that made them dead may still be only in the OS's memory. A failed sync keeps
    /// them all (the next open tries again).
    ///
    /// Returns whether the kept segments were synced.
    ///
    /// - Complexity: one `fsync` per segment kept, only when there is something to delete.
    private func deleteDeadSegments(_ paths: [String], afterSyncing kept: [UInt32]) -> Bool {
        guard !paths.isEmpty else { return false }
        do throws(SystemCallFailure) {
            for number in kept { try syncSegment(number) }
            if let journal = try? fileSystem.open(directory.journalPath, flags: OpenFlags.readOnly, mode: 0) {
                defer { try? fileSystem.close(journal) }
                try fileSystem.fsync(journal)
            }
        } catch {
            return false
        }
        for path in paths { try? fileSystem.unlink(path) }
        return true
    }

    func shutDown() {
        state.withLock { segments in
            segments.closeAll()
            segments.unsynced.removeAll()
            segments.endActive()
            segments.isShutDown = true
        }
    }
}
