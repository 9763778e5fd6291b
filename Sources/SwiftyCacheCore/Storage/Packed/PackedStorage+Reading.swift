#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Packed storage's reads: one positioned read of a whole record from a segment kept open,
/// checked before anything is used.
extension PackedStorage {
    /// Reads the record with one `pread` and checks it; opens the files of large slots.
    /// Called outside the cache lock.
    func open(key: String, location: ValueLocation, lengths: SlotLengths) throws(CacheError) -> OpenedValues? {
        if location.segment == 0 { return try files.open(key: key, location: location, lengths: lengths) }
        guard let record = try readRecord(key: key, location: location, lengths: lengths) else { return nil }
        var descriptors = [Int32](repeating: -1, count: valueCount)
        for slot in 0..<valueCount where record.offsets[slot] < 0 {
            do throws(SystemCallFailure) {
                descriptors[slot] = try files.openSlot(key: key, slot: slot, length: lengths[slot])
            } catch {
                for fd in descriptors where fd >= 0 { try? fileSystem.close(fd) }
                guard FileStorage.isDamage(error) else {
                    throw CacheError.ioFailure(error, operation: .snapshot, path: files.cleanPath(key, slot), key: key)
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
    /// Where other caches write too, a record that does not check out is read once more
    /// through a new descriptor when the one kept open is no longer the file at the segment's
    /// name (another cache compacted the segment away and a new one took its number).
    ///
    /// - Complexity: One `pread` (`preadv2` with `RWF_NOWAIT` when `cachedOnly`).
    func readRecord(
        key: String, location: ValueLocation, lengths: SlotLengths, cachedOnly: Bool, countsDamage: Bool
    ) throws(CacheError) -> ReadResult<RecordBytes> {
        guard isShared, !cachedOnly else {
            return try readRecordOnce(
                key: key, location: location, lengths: lengths, cachedOnly: cachedOnly, countsDamage: countsDamage)
        }
        let result = try readRecordOnce(
            key: key, location: location, lengths: lengths, cachedOnly: false, countsDamage: false)
        if case .found = result { return result }
        guard forgetStaleSegment(location.segment) else {
            if countsDamage, case .missing = result { noteDamagedRecord() }
            return result
        }
        return try readRecordOnce(
            key: key, location: location, lengths: lengths, cachedOnly: false, countsDamage: countsDamage)
    }

    private func readRecordOnce(
        key: String, location: ValueLocation, lengths: SlotLengths, cachedOnly: Bool, countsDamage: Bool
    ) throws(CacheError) -> ReadResult<RecordBytes> {
        let size = Int(recordSize(lengths: lengths))
        guard size > 0 else { return .missing }
        let segment: SegmentFile
        if cachedOnly {
            guard let open = state.withLock({ $0.lookUp(location.segment) }) else { return .needsIO }
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
            throw CacheError.ioFailure(error, operation: .read, path: segmentPath(location.segment), key: key)
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
        do throws(SystemCallFailure) {
            if cachedOnly {
                guard let read = try fileSystem.readFullyIfCached(segment.fd, into: buffer, at: location.offset) else {
                    return .needsIO
                }
                initialized = read
            } else {
                initialized = try fileSystem.readFully(segment.fd, into: buffer, at: location.offset)
            }
        } catch {
            throw CacheError.ioFailure(error, operation: .read, path: segmentPath(location.segment), key: key)
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

    func noteDamagedRecord() {
        state.withLock { $0.corruptRecords += 1 }
    }

    /// Whether every slot of the entry at `location` is in its record (none in a file).
    func holdsInline(location: ValueLocation, lengths: SlotLengths) -> Bool {
        location.segment != 0 && !lengths.contains { PackedRecord.isExternal(length: $0, inlineLimit: inlineLimit) }
    }

    /// The open segment `number`, opening it if needed; `nil` when it does not exist, was
    /// retired by compaction, or is not a segment.
    private func segmentFile(_ number: UInt32) throws(CacheError) -> SegmentFile? {
        if let segment = state.withLock({ $0.lookUp(number) }) { return segment }
        guard state.withLock({ !$0.retired.contains(number) && !$0.isShutDown }) else { return nil }
        let path = segmentPath(number)
        let fd: Int32
        do {
            fd = try fileSystem.open(path, flags: OpenFlags.readOnly, mode: 0)
        } catch {
            guard FileStorage.isDamage(error) else {
                throw CacheError.ioFailure(error, operation: .read, path: path)
            }
            return nil
        }
        let segment = SegmentFile(number: number, fd: fd, fileSystem: fileSystem)
        // A damaged header costs nothing but the header: each record checks itself.
        guard segment.isRegularFile() else { return nil }
        return state.withLock { segments in
            if let raced = segments.lookUp(number) { return raced }
            guard !segments.retired.contains(number), !segments.isShutDown else { return segment }
            segments.insertOpen(segment)
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
}
