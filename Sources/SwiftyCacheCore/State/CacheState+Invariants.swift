/// Consistency checks of the state, run after every operation under the lock in debug builds
/// (and so in every test). They guard the engine's own logic only: nothing read from disk or
/// passed by a caller can make them fail, so release builds skip them.
extension CacheState {
    /// The first broken invariant, `nil` when the state is consistent.
    ///
    /// - Complexity: O(n) in the number of entries.
    func invariantViolation() -> String? {
        if let problem = table.invariantViolation() { return problem }
        var total = 0
        for index in table.indicesInStorageOrder {
            let entry = table[index]
            guard entry.lengths.count == valueCount else {
                return "entry \(entry.key) has \(entry.lengths.count) lengths, not \(valueCount)"
            }
            guard entry.lengths.allSatisfy({ $0 >= 0 }) else { return "entry \(entry.key) has a negative length" }
            guard entry.isReadable || entry.isBeingEdited else {
                return "entry \(entry.key) is neither committed nor being edited"
            }
            guard !entry.isDirtyJournaled || entry.isBeingEdited else {
                return "entry \(entry.key) has a DIRTY line but no editor"
            }
            guard entry.editorID < nextEditorID else { return "entry \(entry.key) has an editor never issued" }
            guard entry.sequenceNumber < nextSequenceNumber else {
                return "entry \(entry.key) has a sequence number never issued"
            }
            if entry.isReadable {
                let (sum, overflow) = total.addingReportingOverflow(entry.totalLength)
                total = overflow ? Int.max : sum
            }
        }
        guard total == size else { return "size is \(size) but the committed lengths sum to \(total)" }
        guard redundantOpCount >= 0 else { return "redundantOpCount is negative: \(redundantOpCount)" }
        guard journal.failure == nil || journal.buffer.isEmpty else {
            return "lines are buffered behind a failed journal write"
        }
        guard isClosed ? lock == nil : (lock != nil || isReadOnly) else {
            return "the directory lock does not match isClosed"
        }
        if isClosed {
            guard journal.fd == -1 else { return "a closed cache keeps its journal open" }
        }
        return nil
    }

    /// Stops a debug build at the first broken invariant; does nothing in release builds.
    func checkInvariants() {
        #if DEBUG
        if let problem = invariantViolation() { assertionFailure("CacheState invariant: \(problem)") }
        #endif
    }
}
