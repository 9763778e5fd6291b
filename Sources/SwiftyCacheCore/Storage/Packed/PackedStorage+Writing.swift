#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Packed storage's writes: staging slots (small ones in memory), publishing an edit as one
/// record, and appending records to the active segment, rolling to a new one when it is full.
extension PackedStorage {
    /// A value up to ``inlineLimit`` bytes is kept in memory for the record; a longer one is
    /// written to `key.slot.tmp`.
    func stage(key: String, slot: Int, contents: UnsafeRawBufferPointer) throws(CacheError) -> StagedSlot {
        guard PackedRecord.isExternal(length: contents.count, inlineLimit: inlineLimit) else {
            return StagedSlot(length: contents.count, inline: Array(contents))
        }
        try refuseFileInSharedDirectory(key: key, length: contents.count)
        return try files.stage(key: key, slot: slot, contents: contents)
    }

    /// Buffers the value in memory until it outgrows ``inlineLimit``, then moves to a file.
    func stage(key: String, slot: Int, streaming body: (any SlotSink) throws -> Void) throws -> StagedSlot {
        let sink = PackedSlotSink(storage: self, key: key, slot: slot)
        do {
            try body(sink)
            return try sink.finish()
        } catch {
            sink.discard()
            throw error
        }
    }

    /// Sharing (``DiskLRUCache/Sharing``): a value file replaced by one cache could be read by
    /// another mid-change, so every slot must fit in a record.
    func refuseFileInSharedDirectory(key: String, length: Int) throws(CacheError) {
        guard isShared else { return }
        throw CacheError.invalidConfiguration(
            "a value of \(length) bytes is longer than the inline limit (\(inlineLimit)): a directory several processes write keeps every value in records",
            operation: .write)
    }

    func stagesFiles(forLengths lengths: SlotLengths) -> Bool {
        lengths.contains { PackedRecord.isExternal(length: $0, inlineLimit: inlineLimit) }
    }

    func keepsFiles(location: ValueLocation, lengths: SlotLengths) -> Bool {
        lengths.indices.contains { isFileSlot($0, location: location, lengths: lengths) }
    }

    func discard(key: String, staged: [StagedSlot?]) -> Bool {
        files.discard(key: key, staged: staged.map { $0?.inline == nil ? $0 : nil })
    }

    // MARK: Publishing

    /// Appends the entry's record (its new inline slots and the kept ones), then renames the
    /// staged files of its large slots into place. Called under the cache lock, after `DIRTY`
    /// when files were staged.
    ///
    /// - Complexity: one `write` of the record, one `rename` per large slot; a partial edit
    ///   also reads the kept inline slots (one `pread`).
    func publish(key: String, staged: [StagedSlot?], committed: CommittedValues?) throws(PublishFailure)
        -> ValueLocation
    {
        let oldLengths = committed?.lengths ?? SlotLengths(repeating: 0, count: valueCount)
        let oldLocation = committed?.location ?? .none
        var lengths = oldLengths
        for slot in staged.indices { if let value = staged[slot] { lengths[slot] = value.length } }
        var oldRecord: RecordBytes?
        var location = ValueLocation.none
        let size = recordSize(lengths: lengths)
        do throws(CacheError) {
            let record = try PackedRecord.encode(key: key, lengths: lengths, inlineLimit: inlineLimit) {
                (slot) throws(CacheError) -> [UInt8] in
                if let value = staged[slot] {
                    guard let inline = value.inline else { throw CacheError.packedInvariant(key: key, slot: slot) }
                    return inline
                }
                // A kept slot: from the old record, or from its file (an entry written as files).
                if !isFileSlot(slot, location: oldLocation, lengths: oldLengths) {
                    if oldRecord == nil {
                        oldRecord = try readRecord(key: key, location: oldLocation, lengths: oldLengths)
                    }
                    guard let oldRecord else {
                        // The kept slot's record is missing or damaged (a file's doing, not a
                        // bug): the edit cannot keep it, and says so.
                        throw CacheError.corruptValue(
                            key: key, path: segmentPath(oldLocation.segment), found: 0, recorded: oldLengths[slot])
                    }
                    return oldRecord.bytes(from: oldRecord.offsets[slot], count: oldLengths[slot])
                }
                do {
                    return try fileSystem.readWholeFile(files.cleanPath(key, slot))
                } catch {
                    throw CacheError.ioFailure(error, operation: .commit, path: files.cleanPath(key, slot), key: key)
                }
            }
            if let record { location = try append(record, key: key) }
        } catch {
            throw PublishFailure(error: error, publishedAny: false)
        }
        let fileSlots = staged.map { value in value.flatMap { $0.inline == nil ? $0 : nil } }
        do {
            _ = try files.publish(key: key, staged: fileSlots, committed: nil)
        } catch {
            // The record just appended is garbage: nothing names it. Files already renamed
            // into place go too: the entry is dropped (see `CacheState.completeEdit`).
            if error.publishedAny {
                for slot in fileSlots.indices where fileSlots[slot] != nil {
                    try? files.removeValueFileIfPresent(key, slot, temporary: false)
                }
            }
            throw error
        }
        noteCommitted(location: location, size: size, replacing: committed)
        return location
    }

    /// Accounts for a record of `size` bytes at `location` that replaces `old` values.
    func noteCommitted(location: ValueLocation, size: Int64, replacing old: CommittedValues?) {
        state.withLock { note(location: location, size: size, replacing: old, in: &$0) }
    }

    func noteCommitted(_ commits: [(location: ValueLocation, size: Int64, replacing: CommittedValues?)]) {
        state.withLock { segments in
            for commit in commits {
                note(location: commit.location, size: commit.size, replacing: commit.replacing, in: &segments)
            }
        }
    }

    private func note(
        location: ValueLocation, size: Int64, replacing old: CommittedValues?, in segments: inout Segments
    ) {
        if location.segment != 0 { segments.addLiveBytes(size, in: location.segment) }
        if let old, old.location.segment != 0 {
            segments.addLiveBytes(-recordSize(lengths: old.lengths), in: old.location.segment)
        }
    }

    /// The record of a whole-entry write, when every value is small enough to be inline;
    /// `nil` otherwise.
    ///
    /// - Complexity: one allocation and one copy of each value.
    func encodeRecord(key: String, values: [Data]) -> [UInt8]? {
        PackedRecord.encode(key: key, values: values, inlineLimit: inlineLimit)
    }

    func appendRecord(key: String, values: [Data], to buffer: inout [UInt8]) -> Bool {
        PackedRecord.append(key: key, values: values, inlineLimit: inlineLimit, to: &buffer)
    }

    /// Deletes the files of slots that were files and are now in the record. Called once the
    /// commit's `CLEAN` line is written, so a crash before it leaves the old values whole.
    func deleteReplacedFiles(key: String, old: CommittedValues, location: ValueLocation, lengths: SlotLengths) -> Bool {
        var deletedAll = true
        for slot in 0..<valueCount
        where isFileSlot(slot, location: old.location, lengths: old.lengths)
            && !isFileSlot(slot, location: location, lengths: lengths)
        {
            do { try files.removeValueFileIfPresent(key, slot, temporary: false) } catch { deletedAll = false }
        }
        return deletedAll
    }

    /// Appends `record` to the active segment, rolling to a new one when it is full; returns
    /// where it starts. After a failed write the segment takes no more records (the next append
    /// rolls), so a torn record is only garbage at its end. In a logging directory the record is a copy (``LogPrefix/Kind/copy``):
    /// its journal line is synced before its call returns, and the log never applies it.
    ///
    /// - Complexity: one `write` (plus `fdatasync` with ``syncsWrites``); a roll adds a file
    ///   creation.
    func append(_ record: [UInt8], key: String) throws(CacheError) -> ValueLocation {
        try appendOne(record, kind: .copy, key: key)
    }

    /// Appends the record of a whole-entry commit: in a logging directory with its prefix
    /// (``LogPrefix/Kind/set``), so that with ``syncsWrites`` the segment's sync alone makes
    /// the commit durable (an open after a crash applies it from the log).
    func appendCommit(_ record: [UInt8], key: String) throws(CacheError) -> ValueLocation {
        try appendOne(record, kind: .set, key: key)
    }

    /// One piece of an append: a record, or in a logging directory a removal's prefix alone.
    struct LoggedRecord {
        var kind: LogPrefix.Kind
        var key: String
        var record: [UInt8]?
    }

    /// The bytes one append writes: in a logging directory each piece's prefix, then its
    /// record; otherwise the records back to back (removals write nothing). Returns them and
    /// where each record starts in them.
    private func appendedBytes(_ pieces: [LoggedRecord], identity: UInt64?) -> (bytes: [UInt8], starts: [Int]) {
        var bytes: [UInt8] = []
        var starts: [Int] = []
        starts.reserveCapacity(pieces.count)
        bytes.reserveCapacity(pieces.reduce(0) { $0 &+ ($1.record?.count ?? 0) &+ 128 })
        for piece in pieces {
            if let identity {
                LogPrefix.append(kind: piece.kind, key: piece.key, record: piece.record, identity: identity, to: &bytes)
            }
            guard let record = piece.record else { continue }
            starts.append(bytes.count)
            bytes.append(contentsOf: record)
        }
        return (bytes, starts)
    }

    /// Appends `pieces` to the active segment with one `write` (and with `syncs` one sync);
    /// returns where each record starts, and passes where the write starts to `started`.
    func appendRecords(
        _ pieces: [LoggedRecord], key: String?, syncs: Bool? = nil, started: (ValueLocation) -> Void = { _ in }
    ) throws(CacheError) -> [ValueLocation] {
        let syncs = syncs ?? syncsWrites
        return try state.withLock { (segments) throws(CacheError) -> [ValueLocation] in
            let (bytes, starts) = appendedBytes(pieces, identity: segments.logIdentity)
            guard !bytes.isEmpty else { return [] }
            let start = try appendLocked(&segments, bytes, key: key, syncs: syncs)
            started(start)
            return starts.map { ValueLocation(segment: start.segment, offset: start.offset + Int64($0)) }
        }
    }

    /// Appends one record (with its prefix of `kind` in a logging directory); returns where
    /// the record starts. The path of every single commit: no array but the record's.
    private func appendOne(_ record: [UInt8], kind: LogPrefix.Kind, key: String) throws(CacheError) -> ValueLocation {
        try state.withLock { (segments) throws(CacheError) -> ValueLocation in
            guard let identity = segments.logIdentity else {
                return try appendLocked(&segments, record, key: key, syncs: syncsWrites)
            }
            var bytes: [UInt8] = []
            bytes.reserveCapacity(record.count &+ LogPrefix.size(keyLength: key.utf8.count))
            LogPrefix.append(kind: kind, key: key, record: record, identity: identity, to: &bytes)
            let prefixSize = bytes.count
            bytes.append(contentsOf: record)
            let start = try appendLocked(&segments, bytes, key: key, syncs: syncsWrites)
            return ValueLocation(segment: start.segment, offset: start.offset + Int64(prefixSize))
        }
    }

    /// Writes `bytes` at the end of the active segment (rolling to a new one when it is full),
    /// under the storage's lock; with `syncs`, syncs it. Returns where they start.
    func appendLocked(_ segments: inout Segments, _ bytes: [UInt8], key: String?, syncs: Bool)
        throws(CacheError) -> ValueLocation
    {
        // (Sharing: each operation looks at the journal's link count first, which the directory's
        // deletion drops to 0 too; the operation then throws. No second look here.)
        if !isShared, let active = segments.active, (try? fileSystem.linkCount(of: active.fd)) == 0 {
            // The segment was deleted underneath (with the directory, or alone): what is
            // appended to it would vanish with the process.
            let failure = directory.writeFailure(
                SystemCallFailure(call: "fstat", errno: Errno.noEntry), operation: .commit,
                path: segmentPath(active.number), key: key)
            if failure.isDirectoryVanished { throw failure }
            segments.endActive()
        }
        if segments.active == nil
            || segments.activeEnd + Int64(bytes.count) > rollSize(liveBytes: segments.totalLiveBytes)
        {
            try roll(&segments, key: key)
        }
        guard let active = segments.active else { throw CacheError.packedInvariant(key: key ?? "", slot: 0) }
        let offset = segments.activeEnd
        do {
            try fileSystem.writeAll(active.fd, bytes)
        } catch {
            // A short write may have left part of the bytes, which end the log's scan: nothing
            // more is appended to this segment (what follows them would never be read back
            // after a crash). What the file holds past the last whole append is garbage.
            let end = (try? fileSystem.size(of: active.fd)) ?? segmentSize
            segments.addRecordBytes(max(0, end - segments.activeEnd), in: active.number)
            segments.endActive()
            throw CacheError.ioFailure(error, operation: .commit, path: segmentPath(active.number), key: key)
        }
        if syncs {
            do {
                try fileSystem.fsync(active.fd)
            } catch {
                // The kernel may have dropped this segment's unwritten pages and report its
                // next sync as a success: nothing more is appended to it. The record is
                // garbage; the next commit rolls to a new segment.
                segments.addRecordBytes(Int64(bytes.count), in: active.number)
                segments.endActive()
                throw CacheError.ioFailure(error, operation: .commit, path: segmentPath(active.number), key: key)
            }
        }
        segments.activeEnd += Int64(bytes.count)
        segments.addRecordBytes(Int64(bytes.count), in: active.number)
        if segments.logIdentity != nil { segments.loggedBytesSinceTail &+= Int64(bytes.count) }
        // One dictionary write per segment between syncs, not per commit.
        if !syncsWrites && !segments.isActiveUnsynced {
            segments.unsynced.insert(active.number)
            segments.isActiveUnsynced = true
        }
        return ValueLocation(segment: active.number, offset: offset)
    }

    /// Starts a new active segment: writes its header to `journal.segment.tmp`, then gives it
    /// the first free segment name with `link(2)` (never over an existing file) and drops the
    /// staging name. A crash can tear only the staging file, which is the cache's by name; a
    /// file named like a segment is never the cache's to delete unless it carries the header.
    ///
    /// - Complexity: a creation, one `write`, a `link` per name taken, an `unlink`.
    private func roll(_ segments: inout Segments, key: String?) throws(CacheError) {
        let staging = directory.newSegmentPath
        let fd: Int32
        do {
            try fileSystem.removeFileIfPresent(staging)
            fd = try fileSystem.open(staging, flags: OpenFlags.createSegment, mode: FileModes.file)
        } catch {
            throw directory.writeFailure(error, operation: .commit, path: staging, key: key)
        }
        var number = segments.nextNumber
        do throws(SystemCallFailure) {
            do {
                try fileSystem.writeAll(fd, Self.segmentHeader)
                if syncsWrites { try fileSystem.fsync(fd) }
                try name(staging, number: &number)
            } catch {
                try? fileSystem.close(fd)
                try? fileSystem.unlink(staging)
                throw error
            }
            try? fileSystem.unlink(staging)
            if syncsWrites {
                do {
                    try directory.sync()
                } catch {
                    // The segment is named but not used: the next open deletes it (no record).
                    try? fileSystem.close(fd)
                    throw error
                }
            }
        } catch {
            throw directory.writeFailure(error, operation: .commit, path: segmentPath(number), key: key)
        }
        // Sharing: held while this cache appends to it, so no other cache compacts it away;
        // the segment it rolls from is let go.
        if isShared {
            try? fileSystem.advisoryLock(fd, .exclusive)
            if let previous = segments.active { try? fileSystem.advisoryLock(previous.fd, .unlocked) }
        }
        let segment = SegmentFile(number: number, fd: fd, fileSystem: fileSystem)
        if !syncsWrites {
            segments.unsynced.insert(number)
            segments.directoryUnsynced = true
        }
        segments.active = segment
        segments.insertOpen(segment)
        segments.isActiveUnsynced = !syncsWrites
        segments.activeEnd = Int64(Self.segmentHeader.count)
        segments.addRecordBytes(0, in: number)
        segments.nextNumber = number &+ 1
    }

    /// Links `staging` to the first segment name from `number` on that no file has; a file of
    /// that name this session does not know is left, and the next number taken. Where the file
    /// system has no hard links, a rename to a name checked free first.
    private func name(_ staging: String, number: inout UInt32) throws(SystemCallFailure) {
        while true {
            let path = segmentPath(number)
            do {
                try fileSystem.link(staging, to: path)
                return
            } catch  where error.errno == Errno.exists && number < UInt32.max {
                number += 1
            } catch  where Errno.noHardLinks.contains(error.errno) {
                guard try fileSystem.kind(of: path) == nil else {
                    guard number < UInt32.max else { throw error }
                    number += 1
                    continue
                }
                try fileSystem.rename(staging, to: path)
                return
            }
        }
    }
}
