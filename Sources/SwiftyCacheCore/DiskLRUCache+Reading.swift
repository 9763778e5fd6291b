#if canImport(FoundationEssentials)
package import FoundationEssentials
#else
package import Foundation
#endif

/// Opening an entry's values for a read without holding the lock during the opens: plan under
/// the lock, open outside it, check under it that the entry did not change meanwhile.
extension DiskLRUCache {
    /// An entry's values, opened.
    struct OpenedEntry {
        var values: OpenedValues
        var lengths: SlotLengths
        var sequenceNumber: UInt64
    }

    /// How many times a read plans again after the entry changed under it before it gives up
    /// and reads a miss: only a key committed without pause by other threads gets there.
    static let readAttempts = 64

    /// Opens the committed values of `key`; `nil` on a miss. No value file is opened while the
    /// lock is held: a FIFO or a slow disk under a value file's name stalls only this read.
    ///
    /// A commit renames its files under the lock and changes the entry's sequence number, so a
    /// read whose opens straddled a commit sees the number change and opens again: it never
    /// returns a mix of old and new slots.
    ///
    /// - Complexity: O(1) lock work and one `open` and `fstat` per slot, per attempt.
    func openEntry(key: String, recordingRead: Bool, operation: String) throws -> OpenedEntry? {
        if recordingRead, let packedReference {
            // Lent, not retained: `packedStorage` holds it for as long as `self` lives, and a
            // retain per read is a write to the one reference count every reading thread writes.
            let read = try packedReference._withUnsafeGuaranteedRef { packed in
                try readRecordInOneHold(packed, key: key, operation: operation)
            }
            switch read {
            case .opened(let entry): return entry
            case .missed: return nil
            case .fallBack: break
            }
        }
        for _ in 0..<Self.readAttempts {
            let plan = try locked(operation: operation, key: key, claimsCleanup: recordingRead) {
                try $0.planRead(key: key, recordingRead: recordingRead)
            }
            guard let plan else { return nil }
            let values = try storage.open(key: key, location: plan.location, lengths: plan.lengths)
            let outcome = try locked(operation: operation, key: key, writesReadLines: recordingRead) {
                $0.finishRead(key: key, plan: plan, opened: values != nil, recordingRead: recordingRead)
            }
            switch outcome {
            case .valid:
                guard let values else { return nil }
                return OpenedEntry(values: values, lengths: plan.lengths, sequenceNumber: plan.sequenceNumber)
            case .missing:
                if let values { storage.close(values) }
                return nil
            case .changed:
                if let values { storage.close(values) }
            }
        }
        return nil
    }
}

/// The values of an entry read from memory only, or why they were not.
enum CachedValues {
    case found([Data])
    /// Missing or damaged: the read must go the full way to deal with it.
    case missing
    /// Reading them would wait for the disk.
    case notInMemory
}

/// What a read from memory only found.
package enum MemoryRead: Sendable {
    /// The read is done: the values, or `nil` on a miss.
    case finished([Data]?)
    /// It must wait for the disk (or deal with damage): do the full read on an I/O thread.
    case needsIO
}

extension DiskLRUCache {
    /// `data(forKey:)` for callers that must not block (the `async` overloads on Swift's
    /// cooperative pool): done when every value is in memory — in packed storage, a record
    /// whose slots are all inline, in the page cache (`preadv2` with `RWF_NOWAIT`); in file
    /// storage, value files whose paths and bytes are in the kernel's caches
    /// (``filesIfInMemory(_:key:)``). Otherwise ``MemoryRead/needsIO``, with no hit counted
    /// (in packed storage the access, recorded with the plan in one lock hold, stays: the full
    /// read that follows records the same LRU touch and `READ` line again, which changes
    /// nothing). It never sleeps on file I/O: it takes the cache lock (held only for in-memory
    /// work and journal appends), reads with calls that refuse to wait for the disk, and leaves
    /// a due flush of buffered `READ` lines to the I/O pool.
    ///
    /// - Complexity: As `data(forKey:)`: one short lock hold and one `preadv2` (packed).
    package func dataIfInMemory(forKey key: String) throws -> MemoryRead {
        try validateForReading(key, operation: "data")
        if let files = storage as? FileStorage { return try filesIfInMemory(files, key: key) }
        guard let packed = packedStorage else { return .needsIO }
        let (plan, flushDue) = try locked(operation: "data", key: key, claimsCleanup: true) {
            (state) throws -> (CacheState.ReadPlan??, Bool) in
            // A read-only cache reads the writer's journal to check an entry: file I/O.
            guard !state.isReadOnly else { return (.none, false) }
            return (.some(try state.planRecordedRead(key: key)), state.claimReadFlush())
        }
        if flushDue { IOThreadPool.shared.submit { [self] in try? self.flushBufferedReads() } }
        guard let plan else { return .needsIO }
        guard let plan else { return .finished(nil) }
        let read: CachedValues
        do {
            read = try packed.readInlineValuesIfCached(key: key, location: plan.location, lengths: plan.lengths)
        } catch {
            try? locked(operation: "data", key: key) { $0.unrecordRead() }
            throw error
        }
        guard case .found(let values) = read else {
            try locked(operation: "data", key: key) { $0.unrecordRead() }
            return .needsIO
        }
        return .finished(values)
    }

    /// ``dataIfInMemory(forKey:)`` in file storage: planned under the lock, the files opened
    /// and read from the kernel's caches outside it, and checked under it (as any read: a
    /// commit in between sends it to the full read).
    ///
    /// - Complexity: Two short lock holds; per slot an `openat2`, `fstat`, `preadv2`, `close`.
    private func filesIfInMemory(_ files: FileStorage, key: String) throws -> MemoryRead {
        let plan = try locked(operation: "data", key: key) { (state) throws -> CacheState.ReadPlan?? in
            guard !state.isReadOnly else { return .none }
            return .some(try state.planRead(key: key, recordingRead: true))
        }
        guard let plan else { return .needsIO }
        guard let plan else { return .finished(nil) }
        guard case .found(let values) = files.readValuesIfCached(key: key, lengths: plan.lengths) else {
            return .needsIO
        }
        let (outcome, flushDue) = try locked(operation: "data", key: key, claimsCleanup: true) { state in
            (
                state.finishRead(key: key, plan: plan, opened: true, recordingRead: true),
                state.claimReadFlush()
            )
        }
        if flushDue { IOThreadPool.shared.submit { [self] in try? self.flushBufferedReads() } }
        guard case .valid = outcome else { return .needsIO }
        return .finished(values)
    }

    /// What a read in one lock hold found.
    private enum OneHoldRead {
        case opened(OpenedEntry)
        case missed
        /// The entry's values are not all in a record that reads back whole (or the cache is
        /// read-only): read the validating way. Nothing stays recorded.
        case fallBack
    }

    /// A packed read with one lock hold (``CacheState/planRecordedRead(key:)``):
    /// readers of different keys meet at the lock once per read, not twice.
    ///
    /// - Complexity: One lock hold and one `pread`.
    private func readRecordInOneHold(_ packed: PackedStorage, key: String, operation: String) throws -> OneHoldRead {
        let plan = try locked(operation: operation, key: key, claimsCleanup: true, writesReadLines: true) {
            (state) throws -> CacheState.ReadPlan?? in
            guard !state.isReadOnly else { return .none }
            return .some(try state.planRecordedRead(key: key))
        }
        guard let plan else { return .fallBack }
        guard let plan else { return .missed }
        if packed.holdsInline(location: plan.location, lengths: plan.lengths) {
            let read: PackedStorage.RecordRead
            do {
                read = try packed.readRecord(
                    key: key, location: plan.location, lengths: plan.lengths, cachedOnly: false, countsDamage: false)
            } catch {
                try? locked(operation: operation, key: key) { $0.unrecordRead() }
                throw error
            }
            if case .found(let record) = read {
                // No descriptors: every slot is in the record.
                let values = OpenedValues(descriptors: [], record: record)
                return .opened(OpenedEntry(values: values, lengths: plan.lengths, sequenceNumber: plan.sequenceNumber))
            }
        }
        try locked(operation: operation, key: key) { $0.unrecordRead() }
        return .fallBack
    }

    /// Writes the buffered `READ` lines once enough have piled up, after releasing the lock.
    private func flushBufferedReads() throws {
        try locked(operation: "read", writesReadLines: true) { $0.isReadFlushClaimed = false }
    }
}
