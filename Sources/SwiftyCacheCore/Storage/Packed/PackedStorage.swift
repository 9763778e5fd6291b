#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Small values packed into append-only segment files, in the spirit of Bitcask: a commit
/// appends *one* record holding the key, the slot lengths and every inline slot's bytes
/// (``PackedRecord``), with one `write`; the journal's `CLEAN` line then names the record's
/// segment and offset. Slots longer than ``inlineLimit`` stay files (`key.N`, as in
/// ``FileStorage``), so large values and streaming are unchanged.
///
/// A directory in packed storage holds:
///
///     journal                  the journal, with the packed header (see ``Journal``)
///     segment-00000001.pack    16-byte header "swiftycache.seg\n", then records back to back
///     segment-00000002.pack    the active segment, appended to; rolls past 4 MiB
///     3f2a….1                  a slot above the inline limit, as in file storage
///
/// - **Reads** are one `pread` of the whole record from a segment descriptor kept open, then a
///   check of its checksum, key and lengths: a record that fails is a miss, the entry is
///   dropped and counted in ``corruptRecordCount``; wrong bytes are never returned. The record
///   is then in memory, so a snapshot reads it as it was whatever happens next.
/// - **Garbage**: a record replaced, removed or evicted stays in its segment until compaction
///   (``CacheState/compact(segment:)``) copies the live records of the segment with the most
///   garbage to the active one, journals `MOVE` lines and deletes the segment.
/// - **Crash safety**: a record is written before the `CLEAN` line that names it, and a
///   segment is deleted only after the `MOVE` lines of everything copied out of it; a record
///   torn by a crash is never named by the journal, and a session never appends after a tail
///   it did not write itself (after a crash, writing starts in a new segment).
///
/// Accounting (``Segments``) is guarded by the storage's own lock, taken inside the cache
/// lock or alone, never the other way round.
final class PackedStorage: CompactingStorage {
    let directory: CacheDirectory
    let valueCount: Int
    /// Slots longer than this many bytes are files; the directory's journal records it.
    let inlineLimit: Int
    let syncsWrites: Bool
    let isReadOnly: Bool
    /// The slots kept in files, with file storage's names and rules.
    let files: FileStorage
    /// A segment rolls once it holds this many bytes.
    let segmentSize: Int64
    private let state: LockedState<Segments>

    static let segmentHeader = Array("swiftycache.seg\n".utf8)
    static let defaultSegmentSize: Int64 = 4 << 20

    init(
        directory: CacheDirectory, valueCount: Int, inlineLimit: Int, syncsWrites: Bool, isReadOnly: Bool,
        segmentSize: Int64 = PackedStorage.defaultSegmentSize
    ) {
        self.directory = directory
        self.valueCount = valueCount
        self.inlineLimit = inlineLimit
        self.syncsWrites = syncsWrites
        self.isReadOnly = isReadOnly
        self.segmentSize = segmentSize
        self.files = FileStorage(directory: directory, valueCount: valueCount, syncsWrites: syncsWrites)
        self.state = LockedState(Segments())
    }

    private var fileSystem: any FileSystem { directory.fileSystem }

    /// The segments and their accounting.
    struct Segments {
        /// Segments opened so far, by number.
        var open: [UInt32: SegmentFile] = [:]
        /// Bytes of records (written, live or garbage) in each known segment.
        var recordBytes: [UInt32: Int64] = [:]
        /// Bytes of records the index names, in each known segment.
        var liveBytes: [UInt32: Int64] = [:]
        /// The segment appended to, and its size; `nil` until the first write of a session.
        var active: SegmentFile?
        var activeEnd: Int64 = 0
        var nextNumber: UInt32 = 1
        /// Segments compaction deleted: never reopened by a late reader.
        var retired: Set<UInt32> = []
        /// Segments the journal names whose header is damaged: read, never deleted.
        var foreign: Set<UInt32> = []
        var corruptRecords = 0
        var isShutDown = false
        /// Segments written since they were last forced to stable storage, and whether a
        /// segment was created since the directory was: what ``makeDurable(operation:)`` syncs.
        var unsynced: [UInt32: SegmentFile] = [:]
        var directoryUnsynced = false
        /// Whether ``active`` is in ``unsynced`` already.
        var isActiveUnsynced = false
        /// The sums of ``recordBytes`` and ``liveBytes``, kept as they change: every operation
        /// asks whether compaction is due.
        private(set) var totalRecordBytes: Int64 = 0
        private(set) var totalLiveBytes: Int64 = 0

        mutating func addRecordBytes(_ count: Int64, in segment: UInt32) {
            recordBytes[segment, default: 0] += count
            totalRecordBytes += count
        }

        mutating func addLiveBytes(_ count: Int64, in segment: UInt32) {
            liveBytes[segment, default: 0] += count
            totalLiveBytes += count
        }

        mutating func forget(_ segment: UInt32) {
            totalRecordBytes -= recordBytes.removeValue(forKey: segment) ?? 0
            totalLiveBytes -= liveBytes.removeValue(forKey: segment) ?? 0
            open[segment] = nil
            unsynced[segment] = nil
            if active?.number == segment {
                active = nil
                isActiveUnsynced = false
            }
        }
    }

    // MARK: Names

    func segmentPath(_ number: UInt32) -> String { directory.path(CacheFileName.segment(number).name) }

    func path(key: String, slot: Int, staged: Bool) -> String { files.path(key: key, slot: slot, staged: staged) }

    var sharesFiles: Bool { true }

    func isOwnSharedFile(atPath path: String) -> Bool {
        guard let fd = try? fileSystem.open(path, flags: OpenFlags.readOnly, mode: 0) else { return false }
        return SegmentFile(number: 0, fd: fd, fileSystem: fileSystem).hasValidHeader()
    }

    var corruptRecordCount: Int { state.withLock { $0.corruptRecords } }

    /// The size of the record of an entry with `lengths`; 0 when it has none.
    func recordSize(lengths: SlotLengths) -> Int64 {
        Int64(PackedRecord.size(lengths: lengths, inlineLimit: inlineLimit) ?? 0)
    }

    /// Whether `slot` of an entry at `location` with `lengths` is a file.
    func isFileSlot(_ slot: Int, location: ValueLocation, lengths: SlotLengths) -> Bool {
        location.segment == 0 || PackedRecord.isExternal(length: lengths[slot], inlineLimit: inlineLimit)
    }

    // MARK: Staging

    /// A value up to ``inlineLimit`` bytes is kept in memory for the record; a longer one is
    /// written to `key.slot.tmp`.
    func stage(key: String, slot: Int, contents: UnsafeRawBufferPointer) throws(CacheError) -> StagedSlot {
        guard PackedRecord.isExternal(length: contents.count, inlineLimit: inlineLimit) else {
            return StagedSlot(length: contents.count, inline: Array(contents))
        }
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
                    throw CacheError.ioFailure(error, operation: "commit", path: files.cleanPath(key, slot), key: key)
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
        let oldSize = old.map { recordSize(lengths: $0.lengths) } ?? 0
        let oldSegment = old?.location.segment ?? 0
        state.withLock { segments in
            if location.segment != 0 { segments.addLiveBytes(size, in: location.segment) }
            if oldSegment != 0 { segments.addLiveBytes(-oldSize, in: oldSegment) }
        }
    }

    /// The record of a whole-entry write, when every value is small enough to be inline;
    /// `nil` otherwise.
    ///
    /// - Complexity: one allocation and one copy of each value.
    func encodeRecord(key: String, values: [Data]) -> [UInt8]? {
        guard !values.contains(where: { PackedRecord.isExternal(length: $0.count, inlineLimit: inlineLimit) }) else {
            return nil
        }
        return try? PackedRecord.encode(
            key: key, lengths: SlotLengths(values.lazy.map(\.count)), inlineLimit: inlineLimit,
            inlineValue: { Array(values[$0]) })
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
    /// where it starts. After a failed write the segment's end is read back, so a torn record
    /// is only garbage.
    ///
    /// - Complexity: one `write` (plus `fdatasync` with ``syncsWrites``); a roll adds a file
    ///   creation.
    func append(_ record: [UInt8], key: String) throws(CacheError) -> ValueLocation {
        try state.withLock { (segments) throws(CacheError) -> ValueLocation in
            if let active = segments.active, (try? fileSystem.status(of: active.fd))?.linkCount == 0 {
                // The segment was deleted underneath (with the directory, or alone): what is
                // appended to it would vanish with the process.
                guard (try? fileSystem.kind(of: directory.path)) == .directory else {
                    throw CacheError.ioFailure(
                        SystemCallError(call: "fstat", errno: Errno.noEntry), operation: "commit",
                        path: segmentPath(active.number), key: key)
                }
                segments.active = nil
                segments.isActiveUnsynced = false
            }
            if segments.active == nil || segments.activeEnd + Int64(record.count) > segmentSize {
                try roll(&segments, key: key)
            }
            guard let active = segments.active else { throw CacheError.packedInvariant(key: key, slot: 0) }
            let offset = segments.activeEnd
            do {
                try fileSystem.writeAll(active.fd, record)
                if syncsWrites { try fileSystem.fsync(active.fd) }
            } catch {
                let end = (try? fileSystem.size(of: active.fd)) ?? segmentSize
                segments.addRecordBytes(max(0, end - segments.activeEnd), in: active.number)
                segments.activeEnd = end
                throw CacheError.ioFailure(error, operation: "commit", path: segmentPath(active.number), key: key)
            }
            segments.activeEnd += Int64(record.count)
            segments.addRecordBytes(Int64(record.count), in: active.number)
            // One dictionary write per segment between syncs, not per commit.
            if !syncsWrites && !segments.isActiveUnsynced {
                segments.unsynced[active.number] = active
                segments.isActiveUnsynced = true
            }
            return ValueLocation(segment: active.number, offset: offset)
        }
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
            throw CacheError.ioFailure(error, operation: "commit", path: staging, key: key)
        }
        var number = segments.nextNumber
        do throws(SystemCallError) {
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
            throw CacheError.ioFailure(error, operation: "commit", path: segmentPath(number), key: key)
        }
        let segment = SegmentFile(number: number, fd: fd, fileSystem: fileSystem)
        if !syncsWrites {
            segments.unsynced[number] = segment
            segments.directoryUnsynced = true
        }
        segments.open[number] = segment
        segments.active = segment
        segments.isActiveUnsynced = !syncsWrites
        segments.activeEnd = Int64(Self.segmentHeader.count)
        segments.addRecordBytes(0, in: number)
        segments.nextNumber = number &+ 1
    }

    /// Links `staging` to the first segment name from `number` on that no file has; a file of
    /// that name this session does not know is left, and the next number taken. Where the file
    /// system has no hard links, a rename to a name checked free first.
    private func name(_ staging: String, number: inout UInt32) throws(SystemCallError) {
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

    // MARK: Reading

    /// Reads the record with one `pread` and checks it; opens the files of large slots.
    /// Called outside the cache lock.
    func open(key: String, location: ValueLocation, lengths: SlotLengths) throws(CacheError) -> OpenedValues? {
        if location.segment == 0 { return try files.open(key: key, location: location, lengths: lengths) }
        guard let record = try readRecord(key: key, location: location, lengths: lengths) else { return nil }
        var descriptors = [Int32](repeating: -1, count: valueCount)
        for slot in 0..<valueCount where record.offsets[slot] < 0 {
            do throws(SystemCallError) {
                descriptors[slot] = try files.openSlot(key: key, slot: slot, length: lengths[slot])
            } catch {
                for fd in descriptors where fd >= 0 { try? fileSystem.close(fd) }
                guard FileStorage.isDamage(error) else {
                    throw CacheError.ioFailure(error, operation: "snapshot", path: files.cleanPath(key, slot), key: key)
                }
                return nil
            }
        }
        return OpenedValues(descriptors: descriptors, record: record)
    }

    /// Reads the record at `location` and checks it; with `cachedOnly`, only from a segment
    /// already open and only bytes already in memory, so that the call never sleeps on I/O.
    /// With `countsDamage` false, a damaged record is not counted in ``corruptRecordCount``:
    /// for a first attempt whose caller reads again the validating way, which counts it.
    ///
    /// - Complexity: One `pread` (`preadv2` with `RWF_NOWAIT` when `cachedOnly`).
    func readRecord(
        key: String, location: ValueLocation, lengths: SlotLengths, cachedOnly: Bool, countsDamage: Bool
    ) throws(CacheError) -> RecordRead {
        let size = Int(recordSize(lengths: lengths))
        guard size > 0 else { return .missing }
        let segment: SegmentFile
        if cachedOnly {
            guard let open = state.withLock({ $0.open[location.segment] }) else { return .notInMemory }
            segment = open
        } else {
            guard let opened = try segmentFile(location.segment) else { return .missing }
            segment = opened
        }
        let isHeld: Bool
        do {
            isHeld = try location.offset >= 0 && segment.holds(size, at: location.offset)
        } catch {
            // Not damage: the size could not be learned (an I/O error), and nothing is read.
            throw CacheError.ioFailure(error, operation: "read", path: segmentPath(location.segment), key: key)
        }
        guard isHeld else {
            // Lengths from the journal that the segment cannot hold: damage, never an allocation.
            if countsDamage { state.withLock { $0.corruptRecords += 1 } }
            return .missing
        }
        // Not zero-filled first: the read fills it, and only what it filled counts. Handed to
        // the `RecordBytes` when the record checks out, deallocated on every other way out.
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: size, alignment: 8)
        var handedOver = false
        defer { if !handedOver { buffer.deallocate() } }
        let initialized: Int
        do throws(SystemCallError) {
            if cachedOnly {
                guard let read = try fileSystem.readFullyIfCached(segment.fd, into: buffer, at: location.offset) else {
                    return .notInMemory
                }
                initialized = read
            } else {
                initialized = try fileSystem.readFully(segment.fd, into: buffer, at: location.offset)
            }
        } catch {
            throw CacheError.ioFailure(error, operation: "read", path: segmentPath(location.segment), key: key)
        }
        let record = UnsafeRawBufferPointer(buffer)
        let offsets =
            initialized == size
            ? PackedRecord.validate(record, key: key, lengths: lengths, inlineLimit: inlineLimit) : nil
        guard let offsets else {
            if countsDamage { state.withLock { $0.corruptRecords += 1 } }
            return .missing
        }
        handedOver = true
        return .found(RecordBytes(taking: buffer, offsets: offsets, lengths: lengths))
    }

    /// Whether every slot of the entry at `location` is in its record (none in a file).
    func holdsInline(location: ValueLocation, lengths: SlotLengths) -> Bool {
        location.segment != 0 && !lengths.contains { PackedRecord.isExternal(length: $0, inlineLimit: inlineLimit) }
    }

    /// The open segment `number`, opening it if needed; `nil` when it does not exist, was
    /// retired by compaction, or is not a segment.
    private func segmentFile(_ number: UInt32) throws(CacheError) -> SegmentFile? {
        if let segment = state.withLock({ $0.open[number] }) { return segment }
        guard state.withLock({ !$0.retired.contains(number) && !$0.isShutDown }) else { return nil }
        let path = segmentPath(number)
        let fd: Int32
        do {
            fd = try fileSystem.open(path, flags: OpenFlags.readOnly, mode: 0)
        } catch {
            guard FileStorage.isDamage(error) else {
                throw CacheError.ioFailure(error, operation: "read", path: path)
            }
            return nil
        }
        let segment = SegmentFile(number: number, fd: fd, fileSystem: fileSystem)
        // A damaged header costs nothing but the header: each record checks itself.
        guard segment.isRegularFile() else { return nil }
        return state.withLock { segments in
            if let raced = segments.open[number] { return raced }
            guard !segments.retired.contains(number), !segments.isShutDown else { return segment }
            segments.open[number] = segment
            return segment
        }
    }

    func read(
        _ values: OpenedValues, slot: Int, key: String, into buffer: UnsafeMutableRawBufferPointer, at offset: Int
    ) throws(CacheError) -> Int {
        if let record = values.record, record.offsets[slot] >= 0 {
            return record.read(slot: slot, into: buffer, at: offset)
        }
        return try files.read(values, slot: slot, key: key, into: buffer, at: offset)
    }

    func close(_ values: OpenedValues) {
        for fd in values.descriptors where fd >= 0 { try? fileSystem.close(fd) }
    }

    // MARK: Deleting

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
        var live: [UInt32: Int64] = [:]
        if !wipe {
            // Entries of one segment mostly sit together: sum runs, then add each run once.
            var run: (segment: UInt32, bytes: Int64) = (0, 0)
            for slot in 0..<table.slotCount {
                guard let (location, lengths) = table.committedValues(inSlot: slot), location.segment != 0 else {
                    continue
                }
                if location.segment != run.segment {
                    if run.segment != 0 { live[run.segment, default: 0] += run.bytes }
                    run = (location.segment, 0)
                }
                run.bytes += recordSize(lengths: lengths)
            }
            if run.segment != 0 { live[run.segment, default: 0] += run.bytes }
        }
        // A segment whose creation was interrupted (or whose staging name outlived a failed
        // unlink): the name is the cache's own.
        try? fileSystem.removeFileIfPresent(directory.newSegmentPath)
        let names = (try? fileSystem.contentsOfDirectory(directory.path)) ?? []
        let numbers = names.compactMap { name -> UInt32? in
            guard case .segment(let number) = CacheFileName(name) else { return nil }
            return number
        }.sorted()
        var dead: [String] = []
        state.withLock { segments in
            segments = Segments()
            segments.nextNumber = (numbers.last ?? 0) &+ 1
            for number in numbers {
                let path = segmentPath(number)
                let isLast = number == numbers.last && closedCleanly && live[number] != nil
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
                segments.open[number] = segment
                segments.addRecordBytes(size - Int64(Self.segmentHeader.count), in: number)
                segments.addLiveBytes(bytes, in: number)
                if isOwn && flags == OpenFlags.appendSegment && size < segmentSize {
                    // Every byte of it was written by a session that closed cleanly.
                    segments.active = segment
                    segments.activeEnd = size
                }
            }
        }
        let kept = Array(state.withLock { $0.open.values })
        if !deleteDeadSegments(dead, afterSyncing: wipe ? [] : kept) {
            // What an earlier session wrote may not be on disk yet: the first rebuild or
            // compaction of this session syncs it before replacing anything.
            state.withLock { segments in
                for segment in kept { segments.unsynced[segment.number] = segment }
                segments.isActiveUnsynced = segments.active != nil
            }
        }
    }

    /// Deletes the segments no journal line names any more, once the journal and the segments
    /// kept (which hold the records that superseded theirs) are on stable storage: after a kill,
    /// the lines that made them dead may still be only in the OS's memory. A failed sync keeps
    /// them all (the next open tries again).
    ///
    /// Returns whether the kept segments were synced.
    ///
    /// - Complexity: one `fsync` per segment kept, only when there is something to delete.
    private func deleteDeadSegments(_ paths: [String], afterSyncing kept: [SegmentFile]) -> Bool {
        guard !paths.isEmpty else { return false }
        do throws(SystemCallError) {
            for segment in kept { try fileSystem.fsync(segment.fd) }
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
            segments.open.removeAll()
            segments.unsynced.removeAll()
            segments.active = nil
            segments.isActiveUnsynced = false
            segments.isShutDown = true
        }
    }

    // MARK: Compaction

    /// The number of segments known (for bounding a compaction pass).
    var segmentCount: Int { state.withLock { $0.recordBytes.count } }
    var sharedFileCount: Int { segmentCount }
    var liveBytes: Int64 { usage.live }

    /// Garbage bytes in the segments, and live ones.
    var usage: (records: Int64, live: Int64) {
        state.withLock { ($0.totalRecordBytes, $0.totalLiveBytes) }
    }

    /// Whether garbage exceeds half the live bytes by more than half a segment: compaction
    /// keeps allocated disk within about 1.5 × the live bytes plus one segment.
    var needsCompaction: Bool {
        guard !isReadOnly else { return false }
        let (records, live) = usage
        return records - live > live / 2 + segmentSize / 2 && compactionCandidate() != nil
    }

    /// The sealed segment with the most garbage, if it has any; the active segment is sealed
    /// first when it is the one.
    func compactionCandidate(sealingActive: Bool = false) -> UInt32? {
        state.withLock { segments -> UInt32? in
            let garbage = segments.recordBytes.map { ($0.key, $0.value - (segments.liveBytes[$0.key] ?? 0)) }
            guard let best = garbage.filter({ $0.1 > 0 }).max(by: { $0.1 < $1.1 }) else { return nil }
            if best.0 == segments.active?.number {
                guard sealingActive else { return nil }
                segments.active = nil
                segments.isActiveUnsynced = false
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
    func makeDurable(operation: String) throws(CacheError) {
        let (pending, directoryPending) = state.withLock { segments in
            defer {
                segments.unsynced.removeAll()
                segments.directoryUnsynced = false
                segments.isActiveUnsynced = false
            }
            return (Array(segments.unsynced.values), segments.directoryUnsynced)
        }
        var failed: [SegmentFile] = []
        var failure: CacheError?
        for segment in pending {
            do {
                try fileSystem.fsync(segment.fd)
            } catch {
                failed.append(segment)
                failure =
                    failure ?? CacheError.ioFailure(error, operation: operation, path: segmentPath(segment.number))
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
            for segment in failed where segments.open[segment.number] != nil {
                segments.unsynced[segment.number] = segment
                if segment.number == segments.active?.number { segments.isActiveUnsynced = true }
            }
            segments.directoryUnsynced = segments.directoryUnsynced || directoryPending
        }
        throw failure
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
            segments.forget(number)
            segments.retired.insert(number)
            return segments.foreign.remove(number) == nil
        }
        if isOwn { try? fileSystem.unlink(segmentPath(number)) }
    }
}
