/// One cache entry as the index knows it, read out of its ``EntryRecord`` (its key is
/// ``EntryTable/key(at:)``, in the record or the arena, not copied here).
struct Entry {
    /// The committed length of each slot, in bytes.
    var lengths: SlotLengths
    /// Where the storage keeps the committed values (``ValueLocation/none`` for file storage).
    var location = ValueLocation.none
    /// The editor holding the entry, `0` when none does.
    var editorID: UInt64 = 0
    /// Changes on every successful commit; a snapshot can only be edited while it matches.
    var sequenceNumber: UInt64 = 0
    /// Whether the entry has been committed at least once (a `CLEAN` line).
    var isReadable = false
    /// Whether the current edit's `DIRTY` line is in the journal: written when the edit is
    /// reserved, before any value file is staged. A one-shot write that stages nothing on disk
    /// (packed storage's records, slots within the inline limit) writes none, unless it
    /// replaces values kept in files, so that a crash mid-write leaves the previous entry intact.
    var isDirtyJournaled = false

    var isBeingEdited: Bool { editorID != 0 }
    /// The sum of the committed lengths. Every way into the index checks that sum first (the
    /// journal parser, the snapshot decoder, a commit), so it cannot overflow; if it ever did,
    /// debug builds stop here and release builds count the entry as empty rather than trap.
    var totalLength: Int {
        guard let total = lengths.total else {
            assertionFailure("the lengths \(lengths) add past Int.max")
            return 0
        }
        return total
    }
}
