/// Consistency checks of the state. They guard the engine's own logic only: nothing read from
/// disk or passed by a caller can make them fail.
///
/// Two levels, so that an app's debug build never pays for our checks (SwiftPM defines `DEBUG`
/// for a dependency's targets in a debug build):
/// - under `DEBUG`, the O(1) checks of ``cheapInvariantViolation()`` after every lock hold;
/// - under the opt-in condition `SWIFTYCACHE_INTERNAL_CHECKS` (set by the test runs and CI through
///   the environment variable of the same name, read by `Package.swift`), the O(n) walk of
///   ``invariantViolation()`` as well, as swift-collections does with
///   `COLLECTIONS_INTERNAL_CHECKS`.
extension CacheState {
    /// The first broken invariant, `nil` when the state is consistent.
    ///
    /// - Complexity: O(n) in the number of entries.
    func invariantViolation() -> String? {
        if let problem = table.invariantViolation() { return problem }
        var total = 0
        for index in table.indicesInStorageOrder {
            let entry = table[index]
            if let problem = entryViolation(entry) { return "entry \(table.key(at: index)) \(problem)" }
            if entry.isReadable {
                let (sum, overflow) = total.addingReportingOverflow(entry.totalLength)
                total = overflow ? Int.max : sum
            }
        }
        guard total == size else { return "size is \(size) but the committed lengths sum to \(total)" }
        return cheapInvariantViolation()
    }

    /// What is wrong with one entry, `nil` if nothing.
    private func entryViolation(_ entry: Entry) -> String? {
        guard entry.lengths.count == valueCount else {
            return "has \(entry.lengths.count) lengths, not \(valueCount)"
        }
        guard entry.lengths.allSatisfy({ $0 >= 0 }) else { return "has a negative length" }
        guard entry.isReadable || entry.isBeingEdited else {
            return "is neither committed nor being edited"
        }
        guard !entry.isDirtyJournaled || entry.isBeingEdited else {
            return "has a DIRTY line but no editor"
        }
        guard entry.editorID < nextEditorID else { return "has an editor never issued" }
        guard entry.sequenceNumber < nextSequenceNumber else {
            return "has a sequence number never issued"
        }
        return nil
    }

    /// The first broken invariant among those checked without walking the index.
    ///
    /// - Complexity: O(1).
    func cheapInvariantViolation() -> String? {
        guard size >= 0 else { return "size is negative: \(size)" }
        guard redundantOpCount >= 0 else { return "redundantOpCount is negative: \(redundantOpCount)" }
        guard journal.failure == nil || journal.buffer.isEmpty else {
            return "lines are buffered behind a failed journal write"
        }
        guard isClosed ? lock == nil && sharedLock == nil : (lock != nil || sharedLock != nil || isReadOnly) else {
            return "the directory lock does not match isClosed"
        }
        if isClosed {
            guard journal.fd == -1 else { return "a closed cache keeps its journal open" }
        }
        // Sharing: the operation lock is held within one hold of the state, never after it.
        guard !holdsOperationLock else { return "the operation lock outlives its hold of the state" }
        return nil
    }

    /// Stops a build with checks at the first broken invariant: the O(n) walk with
    /// `SWIFTYCACHE_INTERNAL_CHECKS`, the O(1) checks in other debug builds, nothing in release.
    ///
    /// The walk runs after every lock hold while the index holds up to ``walkEveryHoldUpTo``
    /// entries, and after one hold in `count / walkEveryHoldUpTo` beyond: O(1) amortized per
    /// hold, so a suite of a million operations over a large index stays linear instead of
    /// quadratic. A broken invariant stays broken until a walk finds it; the O(1) checks run
    /// after every hold the walk skips.
    mutating func checkInvariants() {
        #if SWIFTYCACHE_INTERNAL_CHECKS
        let problem = takeWalkTurn() ? invariantViolation() : cheapInvariantViolation()
        if let problem { assertionFailure("CacheState invariant: \(problem)") }
        #elseif DEBUG
        if let problem = cheapInvariantViolation() { assertionFailure("CacheState invariant: \(problem)") }
        #endif
    }

    /// The largest index walked after every lock hold (``checkInvariants()``).
    static let walkEveryHoldUpTo = 64

    /// Whether the check after this lock hold walks the whole state: every hold up to
    /// ``walkEveryHoldUpTo`` entries, one hold in `count / walkEveryHoldUpTo` beyond.
    mutating func takeWalkTurn() -> Bool {
        holdsSinceWalk += 1
        guard holdsSinceWalk >= table.count / Self.walkEveryHoldUpTo else { return false }
        holdsSinceWalk = 0
        return true
    }

    /// Whether this build walks the whole state after every lock hold.
    static var walksInvariants: Bool {
        #if SWIFTYCACHE_INTERNAL_CHECKS
        true
        #else
        false
        #endif
    }
}
