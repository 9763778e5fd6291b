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
