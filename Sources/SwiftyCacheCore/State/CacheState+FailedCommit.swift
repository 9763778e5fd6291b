/// A commit whose journal line, or that line's sync, failed after its values were written.
///
/// The journal is broken until a rebuild from memory repairs it, so memory decides what the
/// entry holds from then on. In packed storage the values the commit replaced are still whole
/// in their record (segments are only appended to): the entry goes back to them, and the
/// rebuild journals them again, with a `TAIL` line past the failed record in a directory that is
/// its own log. A failed call thus leaves the value that an earlier call made durable, never
/// nothing. An entry that was new is dropped, and so is one whose old or new values have a
/// file slot (the rename that published the new file replaced the old one), as in file
/// storage, where the Java layout keeps no earlier value once the new files are in place.
extension CacheState {
    /// What an entry held before a commit replaced it: enough to go back to it.
    struct PreviousValues {
        var values: CommittedValues
        var sequenceNumber: UInt64
    }

    /// The entry at `index` as it is now, to go back to if the commit about to replace it fails.
    func previousValues(at index: Int) -> PreviousValues? {
        guard let lengths = table.readableLengths(index) else { return nil }
        return PreviousValues(
            values: CommittedValues(location: table.location(index), lengths: lengths),
            sequenceNumber: table.sequenceNumber(index))
    }

    /// Takes the entry for `key`, committed by a write whose line failed, back to `previous`
    /// when its record is still whole and nothing in files was replaced; else forgets it,
    /// deleting what the failed commit wrote. `announced` says whether observers were told of
    /// the commit already. A key written several times by one failed batch or group is undone
    /// member by member, the last first: each goes back to what the one before it wrote.
    ///
    /// - Complexity: O(1).
    mutating func undoFailedCommit(key: String, previous: PreviousValues?, announced: Bool) {
        guard let index = table.index(of: key) else { return }
        let failed = CommittedValues(location: table.location(index), lengths: table[index].lengths)
        guard let previous, let packed = records,
            packed.holdsInline(location: previous.values.location, lengths: previous.values.lengths),
            packed.holdsInline(location: failed.location, lengths: failed.lengths)
        else {
            forgetEntryDeletingValues(index)
            if previous != nil || announced { changes.record(key: key, kind: .removed) }
            return
        }
        // The old record is live again, the failed one garbage.
        packed.noteCommitted(
            location: previous.values.location, size: packed.recordSize(lengths: previous.values.lengths),
            replacing: failed)
        let (restored, overflow) = size.addingReportingOverflow(
            previous.values.lengths.reduce(0, +) - failed.lengths.reduce(0, +))
        size = overflow ? Int.max : max(0, restored)
        table.setCommitted(
            index, lengths: previous.values.lengths, location: previous.values.location,
            sequenceNumber: previous.sequenceNumber)
        if announced { changes.record(key: key, kind: .committed) }
    }
}
