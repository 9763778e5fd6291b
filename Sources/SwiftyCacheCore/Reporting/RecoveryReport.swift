/// What opening the cache found and repaired.
public struct RecoveryReport: Sendable, Hashable {
    /// Why the cache's files were deleted (a journal header that did not match, a corrupt line,
    /// an empty or damaged journal), or `nil` when the journal was read as is. The Java cache
    /// empties the whole directory in that case; this one deletes only its own files.
    public var wipeReason: String?
    /// Whether `journal.bkp` was promoted because `journal` was missing (a crash mid-rebuild).
    public var restoredBackup = false
    /// Entries whose edit never finished (a `DIRTY` line with no `CLEAN` or `REMOVE`); their
    /// files were deleted.
    public var droppedIncompleteEntries = 0
    /// Leftover `.tmp` files and value files no entry refers to, deleted on open.
    public var removedStrayFiles = 0
    /// Whether the directory was swept for stray files. It is skipped when the previous session
    /// ended with `close()`, which leaves none.
    public var sweptDirectory = false
    /// Whether the journal was rewritten on open (for example after a torn last line).
    public var rebuiltJournal = false
    /// Files and folders in the directory that the cache did not create (no journal line names
    /// their key), sorted. They were left alone, and the cache never deletes or writes them;
    /// a key whose value file would take one of their names is refused.
    public var unknownFiles: [String] = []
    /// Whether a directory in file storage was converted to packed storage on open (an
    /// `ObjectCache` directory of an earlier release): its entries were kept, their values
    /// staying files until they are next written. See ``DiskLRUCache/Storage``.
    public var migratedFromFileStorage = false
    /// Packed storage: journal lines whose check failed (a flipped bit, a damaged block). Each
    /// was skipped, and the entries it may name were dropped rather than trusted; the rest of
    /// the journal was replayed. See ``droppedDamagedEntries``.
    public var damagedJournalLines = 0
    /// Entries dropped because a damaged journal line may name them (usually one per line):
    /// they read as misses, never as an older value.
    public var droppedDamagedEntries = 0
    /// Whether the index was loaded as the previous `close()` saved it beside the
    /// clean marker, instead of replaying the journal (which the marker showed unchanged).
    public var loadedSavedIndex = false
    /// Packed storage with `syncsWrites`: commits and batch removals read back from the
    /// segments because their journal lines never reached the disk (a crash after the
    /// segment's sync), and applied.
    public var recoveredLoggedChanges = 0
    /// Entries dropped because a value file written shortly before a crash held a block of
    /// zeros: a power cut can leave a file renamed into place at its length but with its data
    /// never written (ext4 can). Checked on the first open after a session that did not close
    /// cleanly, for the files modified in the five minutes before the journal's last change;
    /// the entries read as misses, never as zeros.
    public var droppedUnwrittenValues = 0

    /// Whether the cache's files were deleted because its journal was unusable.
    public var wasWiped: Bool { wipeReason != nil }

    /// An empty report: nothing found, nothing repaired.
    public init() {}
}
