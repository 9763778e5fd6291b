#if canImport(FoundationEssentials)
package import FoundationEssentials
#else
package import Foundation
#endif

/// Reads go one of two ways, whatever the storage:
/// - **in one lock hold** (``readInOneHold(_:key:operation:cachedOnly:)``), for values that check
///   themselves (a ``RecordStorage``'s records): the plan records the hit, the record is read
///   outside the lock, and nothing else is needed;
/// - **validated** (``readValidated(key:recordingRead:operation:cachedOnly:open:close:)``): plan
///   under the lock, open the values outside it, check under it that the entry did not change.
///
/// Each has a variant that only reads what is in memory (`cachedOnly`), for the `async`
/// overloads' first try on the caller's task.
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
    /// - Complexity: O(1) lock work and one `open` and `fstat` per slot, per attempt (one
    ///   `pread` in one lock hold for a record).
    func openEntry(key: String, recordingRead: Bool, operation: CacheError.Operation) throws -> OpenedEntry? {
        if recordingRead, let recordReader {
            switch try readInOneHold(recordReader, key: key, operation: operation, cachedOnly: false) {
            case .opened(let entry): return entry
            case .missed: return nil
            case .fallBack: break
            }
        }
        let read = try readValidated(
            key: key, recordingRead: recordingRead, operation: operation, cachedOnly: false,
            open: { plan in try storage.open(key: key, location: plan.location, lengths: plan.lengths) },
            close: { storage.close($0) })
        guard case .read(let values, let plan) = read else { return nil }
        return OpenedEntry(values: values, lengths: plan.lengths, sequenceNumber: plan.sequenceNumber)
    }

    /// `data(forKey:)` for callers that must not block (the `async` overloads on Swift's
    /// cooperative pool): done when every value is in memory (a record in the page cache, read
    /// with `preadv2` and `RWF_NOWAIT`; value files whose paths and bytes are in the kernel's
    /// caches). Otherwise ``MemoryRead/needsIO``, with no hit counted (the LRU touch and `READ`
    /// line a one-hold plan recorded stay: the full read that follows records them again, which
    /// changes nothing). It never sleeps on file I/O: it takes the cache lock (held only for
    /// in-memory work and journal appends), reads with calls that refuse to wait for the disk,
    /// and leaves a due flush of buffered `READ` lines to the I/O pool.
    ///
    /// - Complexity: As `data(forKey:)`.
    package func dataIfInMemory(forKey key: String) throws -> MemoryRead {
        try validateForReading(key, operation: .data)
        if let recordReader {
            switch try readInOneHold(recordReader, key: key, operation: .data, cachedOnly: true) {
            case .opened(let entry):
                // Every slot is in the record, in memory: no I/O.
                return .finished(try storage.readAll(entry.values, lengths: entry.lengths, key: key))
            case .missed: return .finished(nil)
            case .fallBack: return .needsIO
            }
        }
        let read = try readValidated(
            key: key, recordingRead: true, operation: .data, cachedOnly: true,
            open: { plan -> [Data]? in
                let read = storage.readValuesIfCached(key: key, location: plan.location, lengths: plan.lengths)
                guard case .found(let values) = read else { return nil }
                return values
            },
            close: { _ in })
        switch read {
        case .read(let values, _): return .finished(values)
        case .missed: return .finished(nil)
        case .notInMemory: return .needsIO
        }
    }

    /// What a read in one lock hold found.
    private enum OneHoldRead {
        case opened(OpenedEntry)
        case missed
        /// The entry's values are not all in a record that reads back whole (or the cache is
        /// read-only, or, `cachedOnly`, they are not in memory): read the validating way.
        /// Nothing stays recorded.
        case fallBack
    }

    /// A read with one lock hold (``CacheState/planRecordedRead(key:)``): readers of different
    /// keys meet at the lock once per read, not twice. If the record cannot be read whole (a
    /// slot in a file, moved, damaged, or not in memory), the hit is taken back
    /// (``CacheState/unrecordRead()``): the validating read that follows counts it, and any
    /// damage, once.
    ///
    /// - Complexity: One lock hold and one `pread`.
    private func readInOneHold(
        _ reader: some RecordReader, key: String, operation: CacheError.Operation, cachedOnly: Bool
    ) throws -> OneHoldRead {
        let (plan, flushDue) = try locked(
            operation: operation, key: key, claimsCleanup: true, writesReadLines: !cachedOnly
        ) { (state) throws -> (CacheState.ReadPlan??, Bool) in
            // A read-only cache reads the writer's journal to check an entry: the validating way.
            guard !state.isReadOnly else { return (.none, false) }
            return (.some(try state.planRecordedRead(key: key)), cachedOnly && state.claimReadFlush())
        }
        if flushDue { IOThreadPool.shared.submit { [self] in try? self.flushBufferedReads() } }
        guard let plan else { return .fallBack }
        guard let plan else { return .missed }
        if reader.holdsInline(location: plan.location, lengths: plan.lengths) {
            let read: RecordRead
            do {
                read = try reader.readRecord(
                    key: key, location: plan.location, lengths: plan.lengths, cachedOnly: cachedOnly,
                    countsDamage: false)
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

    /// What a validated read found.
    private enum ValidatedRead<Values> {
        case read(Values, CacheState.ReadPlan)
        case missed
        /// `cachedOnly`: the values are not in memory, the cache is read-only, or the entry
        /// changed meanwhile; nothing was recorded.
        case notInMemory
    }

    /// The validating read: plan under the lock, `open` the values outside it, check under it
    /// that the entry is still the one planned (or drop it, when `open` found its values
    /// missing or damaged); plans again after a change, up to ``readAttempts`` times. With
    /// `cachedOnly`, `open` reads from memory only, a single attempt is made, and anything but
    /// a clean read is ``ValidatedRead/notInMemory``.
    ///
    /// - Complexity: Two short lock holds per attempt, and what `open` does.
    private func readValidated<Values>(
        key: String, recordingRead: Bool, operation: CacheError.Operation, cachedOnly: Bool,
        open: (CacheState.ReadPlan) throws -> Values?, close: (Values) -> Void
    ) throws -> ValidatedRead<Values> {
        for _ in 0..<(cachedOnly ? 1 : Self.readAttempts) {
            let plan = try locked(operation: operation, key: key, claimsCleanup: recordingRead && !cachedOnly) {
                (state) throws -> CacheState.ReadPlan?? in
                // A read-only cache reads the writer's journal to check an entry: file I/O.
                if cachedOnly && state.isReadOnly { return .none }
                return .some(try state.planRead(key: key, recordingRead: recordingRead))
            }
            guard let plan else { return .notInMemory }
            guard let plan else { return .missed }
            let values = try open(plan)
            if cachedOnly && values == nil { return .notInMemory }
            let (outcome, flushDue) = try locked(
                operation: operation, key: key, claimsCleanup: cachedOnly,
                writesReadLines: recordingRead && !cachedOnly
            ) { state in
                (
                    state.finishRead(key: key, plan: plan, opened: values != nil, recordingRead: recordingRead),
                    cachedOnly && state.claimReadFlush()
                )
            }
            if flushDue { IOThreadPool.shared.submit { [self] in try? self.flushBufferedReads() } }
            switch outcome {
            case .valid:
                guard let values else { return .missed }
                return .read(values, plan)
            case .missing:
                if let values { close(values) }
                return .missed
            case .changed:
                if let values { close(values) }
                if cachedOnly { return .notInMemory }
            }
        }
        return .missed
    }

    /// Writes the buffered `READ` lines once enough have piled up, after releasing the lock.
    private func flushBufferedReads() throws {
        try locked(operation: .read, writesReadLines: true) { $0.isReadFlushClaimed = false }
    }
}

/// What a read from memory only found.
package enum MemoryRead: Sendable {
    /// The read is done: the values, or `nil` on a miss.
    case finished([Data]?)
    /// It must wait for the disk (or deal with damage): do the full read on an I/O thread.
    case needsIO
}
