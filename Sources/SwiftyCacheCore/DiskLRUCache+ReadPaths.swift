#if canImport(FoundationEssentials)
package import FoundationEssentials
#else
package import Foundation
#endif

/// Reads go one of two ways, whatever the storage, and the state decides which when the read
/// begins (``CacheState/beginRead(key:recordingRead:cachedOnly:recordsInOneHold:)``):
/// - **in one lock hold**, for values that check themselves (a ``RecordStorage``'s records):
///   the hit is recorded as the read begins, the record is read outside the lock, and nothing
///   else is needed unless it cannot be read;
/// - **validated**: plan under the lock, open the values outside it, check under it that the
///   entry did not change.
///
/// Each can read only what is in memory (`cachedOnly`), for the `async` overloads' first try on
/// the caller's task. Every way ends in one ``ReadResult``.
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
        let read = try readEntry(
            key: key, recordingRead: recordingRead, operation: operation, cachedOnly: false,
            fromRecord: { record, _ in OpenedValues(descriptors: [], record: record) },
            open: { plan in try storage.open(key: key, location: plan.location, lengths: plan.lengths) },
            close: { storage.close($0) })
        guard case .found(let (values, plan)) = read else { return nil }
        return OpenedEntry(values: values, lengths: plan.lengths, sequenceNumber: plan.sequenceNumber)
    }

    /// `data(forKey:)` for callers that must not block (the `async` overloads on Swift's
    /// cooperative pool): ``ReadResult/found(_:)`` or ``ReadResult/missing`` when every value
    /// is in memory (a record in the page cache, read with `preadv2` and `RWF_NOWAIT`; value
    /// files whose paths and bytes are in the kernel's caches), otherwise
    /// ``ReadResult/needsIO``, with no hit counted (the LRU touch and `READ` line a one-hold
    /// read recorded stay: the full read that follows records them again, which changes
    /// nothing). It never sleeps on file I/O: it takes the cache lock (held only for in-memory
    /// work and journal appends), reads with calls that refuse to wait for the disk, and leaves
    /// a due flush of buffered `READ` lines to the I/O pool.
    ///
    /// - Complexity: As `data(forKey:)`.
    package func dataIfInMemory(forKey key: String) throws -> ReadResult<[Data]> {
        try validateForReading(key, operation: .data)
        let read = try readEntry(
            key: key, recordingRead: true, operation: .data, cachedOnly: true,
            fromRecord: { record, plan in
                // Every slot is in the record, in memory: no I/O.
                try storage.readAll(OpenedValues(descriptors: [], record: record), lengths: plan.lengths, key: key)
            },
            open: { plan -> [Data]? in
                let read = storage.readValuesIfCached(key: key, location: plan.location, lengths: plan.lengths)
                guard case .found(let values) = read else { return nil }
                return values
            },
            close: { _ in })
        switch read {
        case .found(let (values, _)): return .found(values)
        case .missing: return .missing
        case .needsIO: return .needsIO
        }
    }

    /// Reads `key`'s values the way the state picks as the read begins: a record read whole in
    /// one lock hold (`fromRecord` makes the values of it), or the validating way (`open` the
    /// values outside the lock, check under it that the entry is still the one planned, or drop
    /// it when `open` found its values missing or damaged; plan again after a change, up to
    /// ``readAttempts`` times). With `cachedOnly`, `open` reads from memory only, a single
    /// attempt is made, and anything but a clean read or a miss is ``ReadResult/needsIO``.
    ///
    /// - Complexity: One lock hold and one `pread` for a record; two short lock holds per
    ///   attempt, and what `open` does, the validating way.
    private func readEntry<Values>(
        key: String, recordingRead: Bool, operation: CacheError.Operation, cachedOnly: Bool,
        fromRecord: (RecordBytes, CacheState.ReadPlan) throws -> Values,
        open: (CacheState.ReadPlan) throws -> Values?, close: (Values) -> Void
    ) throws -> ReadResult<(values: Values, plan: CacheState.ReadPlan)> {
        var recordsInOneHold = recordingRead && recordReader != nil
        for _ in 0..<(cachedOnly ? 1 : Self.readAttempts) {
            let (start, flushDue) = try locked(
                operation: operation, key: key, access: .reads, claimsCleanup: recordingRead,
                writesReadLines: recordsInOneHold && !cachedOnly
            ) { state in
                (
                    try state.beginRead(
                        key: key, recordingRead: recordingRead, cachedOnly: cachedOnly,
                        recordsInOneHold: recordsInOneHold),
                    cachedOnly && state.claimReadFlush()
                )
            }
            if flushDue { IOThreadPool.shared.submit { [self] in try? self.flushBufferedReads() } }
            switch start {
            case .needsIO:
                return .needsIO
            case .miss:
                return .missing
            case .recorded(let plan):
                guard let reader = recordReader else { return .needsIO }
                let read: ReadResult<RecordBytes>
                do {
                    read = try reader.readRecord(
                        key: key, location: plan.location, lengths: plan.lengths, cachedOnly: cachedOnly,
                        countsDamage: false)
                } catch {
                    _ = try? locked(operation: operation, key: key, access: .reads) {
                        $0.abandonRecordedRead(key: key, plan: plan, damaged: false)
                    }
                    throw error.reported(by: operation)
                }
                if case .found(let record) = read {
                    return .found((try CacheError.reporting(operation) { try fromRecord(record, plan) }, plan))
                }
                // Damage is dealt with (the entry dropped, a journal write) by a read that may do
                // file I/O: a read from memory only hands it to the full read.
                let damaged = if case .missing = read { !cachedOnly } else { false }
                let check = try locked(operation: operation, key: key, access: .reads) {
                    $0.abandonRecordedRead(key: key, plan: plan, damaged: damaged)
                }
                if case .missing = check { return .missing }
                if cachedOnly { return .needsIO }
                recordsInOneHold = false
            case .planned(let plan):
                let values = try CacheError.reporting(operation) { try open(plan) }
                if cachedOnly && values == nil { return .needsIO }
                let (check, flushDue) = try locked(
                    operation: operation, key: key, access: .reads, claimsCleanup: cachedOnly,
                    writesReadLines: recordingRead && !cachedOnly
                ) { state in
                    (
                        state.finishRead(key: key, plan: plan, opened: values != nil, recordingRead: recordingRead),
                        cachedOnly && state.claimReadFlush()
                    )
                }
                if flushDue { IOThreadPool.shared.submit { [self] in try? self.flushBufferedReads() } }
                switch check {
                case .valid:
                    guard let values else { return .missing }
                    return .found((values, plan))
                case .missing:
                    if let values { close(values) }
                    return .missing
                case .changed:
                    if let values { close(values) }
                    if cachedOnly { return .needsIO }
                }
            }
        }
        return .missing
    }

    /// Writes the buffered `READ` lines once enough have piled up, after releasing the lock.
    private func flushBufferedReads() throws {
        try locked(operation: .read, access: .reads, writesReadLines: true) { $0.isReadFlushClaimed = false }
    }
}
