/// A set in a shared directory catches up with the others after the operation lock, not
/// under it: the hold only appends the set's line where the last holder said the journal
/// ends, and the lines the others appended before it are applied once the lock is released.
///
/// A set's outcome does not depend on those lines: it writes its key whatever the key held.
/// What they change is settled afterwards in the journal's order, as if they had been applied
/// first: a line of another key is applied as any other cache's line; a line of the set's own
/// key was superseded by the set, so its record is garbage and nothing else changes
/// (``applySupersededLine(_:)``). Whatever reads the whole index under the lock (an eviction,
/// a journal rebuild) applies the lines first (``settleDeferredLines()``). Two processes
/// writing at once then each parse the other's lines while the other holds the lock, instead
/// of in their own hold.
extension CacheState {
    /// A set whose hold deferred the catch-up, in the index: its key, and the record the
    /// others' earlier lines of that key leave current, as they are applied in order.
    struct DeferredOwnSet {
        var key: String
        var current: (location: ValueLocation, size: Int64)?
    }

    /// Notes, just before a set whose hold deferred the catch-up changes the index, which key
    /// it writes and which record it replaces there.
    mutating func noteDeferredOwnSet(key: String, replaced: CommittedValues?) {
        guard deferredCatchUpEnd != nil, let packed = storage.compactingStorage else { return }
        deferredOwnSet = DeferredOwnSet(
            key: key,
            current: replaced.map { ($0.location, packed.recordSize(lengths: $0.lengths)) })
    }

    /// Applies the deferred lines now, under the operation lock, when the set about to be
    /// applied could evict (an eviction picks from the whole index) or the journal must be
    /// rebuilt first.
    mutating func settleDeferredLines(beforeSetOf key: String, lengths: SlotLengths) throws(CacheError) {
        guard deferredCatchUpEnd != nil else { return }
        let (values, overflow) = size.addingReportingOverflow(lengths.total ?? 0)
        let charged = budget.chargedSize(
            values: overflow ? Int.max : values, entries: table.count &+ 1, keyBytes: table.keyBytes &+ key.utf8.count)
        guard overflow || charged > budget.limit(maxSize: maxSize) || journal.failure != nil else { return }
        try settleDeferredLines()
    }

    /// Applies the deferred lines now, under the operation lock; when they cannot be read,
    /// catches up as a holder that found the page out of order does.
    mutating func settleDeferredLines() throws(CacheError) {
        guard deferredCatchUpEnd != nil else { return }
        if !applyDeferredLines() { try catchUpWithOthers(cutsTornTail: true) }
    }

    /// Applies the others' lines a set's hold deferred, in order (a line of the set's key as
    /// superseded). Returns `false` when they could not all be read or parsed: the caller
    /// replays the journal (``forgetSharedView()`` after the lock).
    ///
    /// - Complexity: O(bytes of the deferred lines), one `pread` for a few lines.
    @discardableResult
    mutating func applyDeferredLines() -> Bool {
        guard let end = deferredCatchUpEnd else { return true }
        deferredCatchUpEnd = nil
        var own = deferredOwnSet
        deferredOwnSet = nil
        guard var view = sharedView else { return false }
        let reached = view.catchUp(fileSystem: fileSystem, upTo: end) { key, operation in
            if let ownKey = own?.key, key.elementsEqual(ownKey.utf8) {
                applySupersededLine(operation, current: &own)
            } else {
                applyOthersLine(key, operation)
            }
        }
        sharedView = view
        noteGarbage()
        return reached == end
    }

    /// Forgets the view of the journal, so that the next look replays it whole: after the
    /// deferred lines could not be read once the lock was released.
    mutating func forgetSharedView() {
        sharedView?.close(fileSystem: fileSystem)
        sharedView = nil
        seenChangeCount = nil
    }

    /// A line another cache journaled for the key of this hold's set, before the set's line:
    /// the set replaced what it wrote. The record it names (a commit's, or where a compaction
    /// moved the current one) is counted written and already garbage; the size and the index
    /// are the set's, which replaced the record this cache knew (released by the set).
    private mutating func applySupersededLine(_ operation: Journal.Operation, current: inout DeferredOwnSet?) {
        guard let packed = storage.compactingStorage else { return }
        switch operation {
        case .clean(let lengths, let location):
            let bytes = packed.recordSize(lengths: lengths)
            packed.noteOthersRecord(at: location, size: bytes, replacing: nil)
            packed.noteOthersRelease(at: location, size: bytes)
            current?.current = (location, bytes)
            redundantOpCount += 1
        case .move(let location):
            guard let moved = current?.current else { return }
            packed.noteOthersRecord(at: location, size: moved.size, replacing: nil)
            packed.noteOthersRelease(at: location, size: moved.size)
            current?.current = (location, moved.size)
            redundantOpCount += 1
        case .remove:
            current?.current = nil
            redundantOpCount += 1
        case .dirty, .read, .tail:
            return
        }
    }
}
