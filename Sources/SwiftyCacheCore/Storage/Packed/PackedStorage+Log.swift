/// Packed storage's segments as the directory's log (a journal under
/// ``Journal/packedLogMagic``): the session's identity, where the log goes on, and the scan an
/// open after a crash makes of what follows the journal's last `TAIL` line (``LogPrefix``).
extension PackedStorage {
    /// From now on every append carries its prefix, checked under `identity` (the identity a
    /// `TAIL` line the caller journals names).
    func beginLog(identity: UInt64) {
        state.withLock { segments in
            segments.logIdentity = identity
            segments.loggedBytesSinceTail = 0
        }
    }

    /// Where the next append goes: the active segment's end, or the start of the next segment
    /// (a later number, when a file already has that one: the scan reads every later segment).
    var logPosition: ValueLocation {
        state.withLock { segments in
            if let active = segments.active { return ValueLocation(segment: active.number, offset: segments.activeEnd) }
            return ValueLocation(segment: segments.nextNumber, offset: Int64(Self.segmentHeader.count))
        }
    }

    /// Bytes appended since ``noteTailJournaled()``.
    var loggedBytesSinceTail: Int64 { state.withLock { $0.loggedBytesSinceTail } }

    /// Notes that a `TAIL` line naming ``logPosition`` was journaled.
    func noteTailJournaled() { state.withLock { $0.loggedBytesSinceTail = 0 } }

    /// Appends a group's commits (``GroupCommit``) with one `write` and no sync: each record a
    /// commit of its own (``LogPrefix/Kind/set``). Returns where the write starts (a `TAIL`
    /// line must not pass it until the group is applied) and where each record starts; the
    /// caller syncs with ``syncGroup(segment:)`` outside the cache lock.
    func appendGroup(_ commits: [(key: String, record: [UInt8])]) throws(CacheError)
        -> (start: ValueLocation, locations: [ValueLocation])
    {
        let pieces = commits.map { LoggedRecord(kind: .set, key: $0.key, record: $0.record) }
        var start = ValueLocation.none
        let locations = try appendRecords(pieces, key: commits.count == 1 ? commits[0].key : nil, syncs: false) {
            start = $0
        }
        return (start, locations)
    }

    /// Forces segment `number`, which a group was appended to, to stable storage. A failed
    /// sync ends appending to it (the kernel may have dropped its pages and report the next
    /// sync as a success): the next commit rolls to a new segment.
    func syncGroup(segment number: UInt32) throws(CacheError) {
        do {
            try syncSegment(number)
        } catch {
            state.withLock { segments in
                if segments.active?.number == number {
                    segments.endActive()
                }
            }
            throw CacheError.ioFailure(error, operation: .commit, path: segmentPath(number))
        }
    }

    /// Reads the log from `tail` on, in every segment from `tail.segment` up in order, and
    /// passes each complete change to `apply`: a batch's members together, once its last is
    /// read. A segment's log ends at the first bytes that are not a whole prefix and record
    /// checked under `identity` (a torn write, another cache's bytes, the records of a session
    /// that wrote no prefixes); a batch cut there is never passed on. Files without the
    /// segment header are not read. Returns how many changes were passed on.
    ///
    /// - Complexity: O(bytes read), in windows of 256 KiB; memory for one batch's changes.
    func scanLog(from tail: ValueLocation, identity: UInt64, _ apply: ([LoggedChange]) -> Void) -> Int {
        let names = (try? fileSystem.contentsOfDirectory(directory.path)) ?? []
        let numbers = names.compactMap { name -> UInt32? in
            guard case .segment(let number) = CacheFileName(name), number >= tail.segment else { return nil }
            return number
        }.sorted()
        var applied = 0
        for number in numbers {
            guard let fd = try? fileSystem.open(segmentPath(number), flags: OpenFlags.readOnly, mode: 0) else {
                continue
            }
            let segment = SegmentFile(number: number, fd: fd, fileSystem: fileSystem)
            guard segment.hasValidHeader(), let size = try? fileSystem.size(of: fd) else { continue }
            let headerEnd = Int64(Self.segmentHeader.count)
            let start = number == tail.segment ? max(tail.offset, headerEnd) : headerEnd
            var reader = LogReader(fd: fd, fileSystem: fileSystem, size: size, offset: start)
            var batch: [LoggedChange] = []
            while let (change, kind) = readChange(&reader, segment: number, identity: identity) {
                guard kind != .copy else {
                    // A copy inside a batch would be a forgery: the batch is dropped.
                    batch.removeAll()
                    continue
                }
                batch.append(change)
                guard !kind.continuesBatch else { continue }
                apply(batch)
                applied += batch.count
                batch.removeAll()
            }
        }
        return applied
    }

    /// The change at `reader`'s offset, moving past it; `nil` at the end of the log.
    private func readChange(_ reader: inout LogReader, segment: UInt32, identity: UInt64)
        -> (LoggedChange, LogPrefix.Kind)?
    {
        let start = reader.offset
        guard let fixed = reader.peek(LogPrefix.fixedSize), let kind = LogPrefix.Kind(rawValue: fixed[4]) else {
            return nil
        }
        let keyLength = Int(fixed[5])
        let prefixSize = LogPrefix.size(keyLength: keyLength)
        guard keyLength > 0, let prefix = reader.peek(prefixSize) else { return nil }
        let stored = UInt32(fixed[0]) | UInt32(fixed[1]) << 8 | UInt32(fixed[2]) << 16 | UInt32(fixed[3]) << 24
        let keyBytes = prefix[LogPrefix.fixedSize...]
        // A key that names no path: anything else is not this cache's.
        guard keyBytes.withUnsafeBufferPointer({ CacheFileName.isReplayableKey($0[...]) }) else { return nil }
        let key = String(decoding: keyBytes, as: UTF8.self)
        let fields = Array(prefix[4...])
        guard kind.hasRecord else {
            let check = fields.withUnsafeBytes { LogPrefix.check(fields: $0, recordChecksum: nil, identity: identity) }
            guard check == stored else { return nil }
            reader.advance(prefixSize)
            let position = ValueLocation(segment: segment, offset: start)
            return (LoggedChange(key: key, position: position, lengths: nil), kind)
        }
        reader.advance(prefixSize)
        let recordStart = reader.offset
        guard let (record, lengths) = readRecord(&reader, key: key, kind: kind) else { return nil }
        let recordChecksum = record.withUnsafeBytes { UInt32(littleEndian: $0.loadUnaligned(as: UInt32.self)) }
        let check = fields.withUnsafeBytes {
            LogPrefix.check(fields: $0, recordChecksum: recordChecksum, identity: identity)
        }
        guard check == stored else { return nil }
        let change = LoggedChange(
            key: key, position: ValueLocation(segment: segment, offset: recordStart), lengths: lengths)
        return (change, kind)
    }

    /// The record at `reader`'s offset, checked for `key`, and its lengths, moving past it;
    /// `nil` when it is not whole and sound. A set's slots are all inline; a copy's may be
    /// files.
    private func readRecord(_ reader: inout LogReader, key: String, kind: LogPrefix.Kind)
        -> (record: [UInt8], lengths: SlotLengths)?
    {
        let headerSize = PackedRecord.headerSize(valueCount: valueCount)
        guard let header = reader.peek(headerSize) else { return nil }
        var lengths = SlotLengths(repeating: 0, count: valueCount)
        var size = headerSize
        for slot in 0..<valueCount {
            let base = 4 &+ 4 &* slot
            let field =
                UInt32(header[base]) | UInt32(header[base + 1]) << 8 | UInt32(header[base + 2]) << 16
                | UInt32(header[base + 3]) << 24
            if field == PackedRecord.externalSlotMarker {
                guard kind == .copy else { return nil }
                lengths[slot] = inlineLimit &+ 1
            } else {
                guard Int(field) <= inlineLimit else { return nil }
                lengths[slot] = Int(field)
                size &+= Int(field)
            }
        }
        guard let bytes = reader.peek(size) else { return nil }
        let record = bytes
        let valid = record.withUnsafeBytes {
            PackedRecord.validate($0, key: key, lengths: lengths, inlineLimit: inlineLimit) != nil
        }
        guard valid else { return nil }
        reader.advance(size)
        return (record, lengths)
    }
}

/// Reads a segment forward through a window, for the log's scan: bytes asked for past the
/// file's size are `nil`, never an allocation beyond what the file holds.
struct LogReader {
    let fd: Int32
    let fileSystem: any FileSystem
    let size: Int64
    private(set) var offset: Int64
    private var window: [UInt8] = []
    private var windowStart: Int64 = 0

    static let windowSize = 256 << 10

    init(fd: Int32, fileSystem: any FileSystem, size: Int64, offset: Int64) {
        self.fd = fd
        self.fileSystem = fileSystem
        self.size = size
        self.offset = offset
    }

    /// The `count` bytes at the offset, without moving past them.
    mutating func peek(_ count: Int) -> [UInt8]? {
        guard count >= 0, offset <= size, Int64(count) <= size - offset else { return nil }
        let inWindow = offset >= windowStart && offset + Int64(count) <= windowStart + Int64(window.count)
        if !inWindow {
            let length = Int(min(size - offset, Int64(max(count, Self.windowSize))))
            var fresh = [UInt8](repeating: 0, count: length)
            let read = fresh.withUnsafeMutableBytes { buffer -> Int in
                (try? fileSystem.readFully(fd, into: buffer, at: offset)) ?? 0
            }
            // A file that shrank under the scan ends the log where it now ends.
            guard read >= count else { return nil }
            fresh.removeLast(length - read)
            window = fresh
            windowStart = offset
        }
        let start = Int(offset - windowStart)
        return Array(window[start..<(start + count)])
    }

    mutating func advance(_ count: Int) { offset += Int64(count) }
}
