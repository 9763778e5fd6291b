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
        var lengths: [Int]
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
        for _ in 0..<Self.readAttempts {
            let plan = try locked(operation: operation, key: key, claimsCleanup: recordingRead) {
                try $0.planRead(key: key, recordingRead: recordingRead)
            }
            guard let plan else { return nil }
            let values = try storage.open(key: key, location: plan.location, lengths: plan.lengths)
            let outcome = try locked(operation: operation, key: key) {
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
    /// cooperative pool): done when the entry's values are all in its packed record and the
    /// record is in the page cache, read with `RWF_NOWAIT`; ``MemoryRead/needsIO`` otherwise,
    /// before anything was recorded. It waits for no file I/O: it takes the cache lock (held
    /// only for in-memory work and journal appends), reads only from memory, and leaves a
    /// due flush of buffered `READ` lines to the I/O pool.
    ///
    /// - Complexity: Two short lock holds and one `preadv2`, as a packed `data(forKey:)`.
    package func dataIfInMemory(forKey key: String) throws -> MemoryRead {
        try validateForReading(key, operation: "data")
        guard let packed = storage as? PackedStorage else { return .needsIO }
        let plan = try locked(operation: "data", key: key) { (state) throws -> CacheState.ReadPlan?? in
            // A read-only cache reads the writer's journal to check an entry: file I/O.
            guard !state.isReadOnly else { return .none }
            return .some(try state.planRead(key: key, recordingRead: true))
        }
        guard let plan else { return .needsIO }
        guard let plan else { return .finished(nil) }
        guard
            case .found(let values) = try packed.readInlineValuesIfCached(
                key: key, location: plan.location, lengths: plan.lengths)
        else { return .needsIO }
        let (outcome, flushDue) = try locked(operation: "data", key: key, claimsCleanup: true) { state in
            (
                state.finishRead(key: key, plan: plan, opened: true, recordingRead: true, flushesReads: false),
                state.isReadFlushDue
            )
        }
        if flushDue { IOThreadPool.shared.submit { [self] in try? self.flushBufferedReads() } }
        switch outcome {
        case .valid: return .finished(values)
        case .changed, .missing: return .needsIO
        }
    }

    /// Writes the buffered `READ` lines once enough have piled up.
    private func flushBufferedReads() throws {
        try locked(operation: "read") { $0.flushReadsIfLarge() }
    }
}
