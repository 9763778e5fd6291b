import Dispatch

/// Everything the cache-wide lock guards: the index, the sizes, the journal writer and the
/// counters.
///
/// Its mutating methods hold the decisions: each public operation of ``DiskLRUCache`` takes
/// the lock, calls one of them, and releases the lock. Value bytes go through ``storage``;
/// the journal through ``journal``. One extension per concern: `+Edit` (the edit transaction),
/// `+Reading`, `+Removal`, `+Eviction`, `+Journal`, `+Trash`, `+Recovery` (opening),
/// `+ReadOnly`, `+Compaction`, `+Damage`, `+Closing` and `+Invariants`.
struct CacheState {
    let directory: CacheDirectory
    let storage: any ValueStorage
    /// The storage's whole-entry records (packed storage), looked up once: asking `storage`
    /// each time casts it, a retain and a release on every commit.
    let records: (any RecordStorage)?
    /// The storage's record reads, lent without a retain (``LentRecordStorage``): every read
    /// asks it, under the lock, whether an entry's values check themselves.
    let recordReader: (any RecordReader)?
    var journal: JournalWriter
    /// Whether a flush of buffered `READ` lines is scheduled on the I/O pool.
    var isReadFlushClaimed = false
    var table = EntryTable()
    /// Sum of the committed lengths of readable entries.
    var size = 0
    /// The keys eviction by size passes by (``CacheState+Pins``), kept in `journal.pins`.
    var pins: Set<String> = []
    /// Bumped by every change of ``pins``; ``pinsDurableGeneration`` is the one on disk.
    var pinsGeneration: UInt64 = 0
    var pinsDurableGeneration: UInt64 = 0
    /// ``DiskLRUCache/Options/maxPinnedSize``; `nil`: half of ``maxSize``.
    var maxPinnedSize: Int?
    var maxSize: Int
    /// What ``maxSize`` counts: the values' bytes, or in packed storage the directory's.
    var budget = SizeBudget.values
    var lock: DirectoryLock?
    /// Where other caches write the directory too (``DiskLRUCache/Sharing``): the locks, the
    /// journal as this cache has applied it, and whether this hold has the operation lock
    /// (`+Sharing`).
    var sharedLock: SharedDirectoryLock?
    var sharedView: SharedJournalView?
    var holdsOperationLock = false
    /// Sharing: the count of the directory's changes (``SharedDirectoryLock/Word/changeCount``)
    /// as of the last time this cache caught up: a read that finds it unchanged has nothing to
    /// catch up with.
    var seenChangeCount: UInt64?
    /// Sharing: how many times the journal was rebuilt, as of the last time this cache caught
    /// up under the operation lock (``SharedDirectoryLock/Word/journalReplacements``).
    var seenJournalReplacements: UInt64?
    /// Sharing: whether this hold of the operation lock applied everything the others
    /// journaled (what it leaves in the shared page is true only then).
    var isCaughtUpInHold = false
    /// Sharing: the journal writer's generation when the operation lock was taken (a rebuild
    /// of this hold changes it).
    var journalGenerationAtEntry = 0
    /// Sharing: where the journal ended when a set's hold took the operation lock, when the
    /// others' lines before it are applied only after the lock is released
    /// (``applyDeferredLines()``); `nil` otherwise.
    var deferredCatchUpEnd: Int64?
    /// Sharing: the set whose hold deferred the catch-up, journaled: it goes into the index
    /// after the others' earlier lines.
    var deferredOwnCommit: DeferredOwnCommit?
    /// Sharing: set while a set takes the operation lock (its catch-up may be deferred).
    var defersCatchUp = false
    /// Sharing: `journal.pins` as this cache last read or wrote it.
    var pinsFileStatus: FileStatus?
    /// Journal lines that no longer describe a live entry; see ``isJournalRebuildRequired``.
    var redundantOpCount = 0
    /// Packed storage: reads that moved an entry in LRU order since the journal last recorded
    /// the order (a rebuild or a saved index writes it). Reads write nothing there; recency
    /// reaches the disk at the next rebuild or clean close, and after a crash the order is the
    /// one of the last writes.
    var unjournaledTouches = 0
    var nextSequenceNumber: UInt64 = 1
    /// The identity of this session's log (``LogPrefix``), drawn at random for each session: a
    /// record's prefix checks only under the identity of the `TAIL` line before it.
    let logIdentity = UInt64.random(in: 1...UInt64.max)
    /// The last `TAIL` line a replay met: its identity and where the log goes on.
    var replayedLogTail: (identity: UInt64, location: ValueLocation)?
    /// Where the appends of a group being synced start (``GroupCommit``): no `TAIL` line may
    /// pass it until the group is applied, or an open after a crash would not read it back.
    var pendingGroupStart: ValueLocation?
    var nextEditorID: UInt64 = 1
    var isClosed = false
    var isCleanupScheduled = false
    var statistics = CacheStatistics()
    /// Lock holds since the last invariant walk (``checkInvariants()``), with internal checks.
    var holdsSinceWalk = 0
    /// Files renamed out of the way under the lock, to unlink after it is released: on this
    /// kind of file system an unlink can wait for the device, and nothing should wait behind it.
    var pendingDeletions: [String] = []
    /// Counts the batches of trash taken by operations and not yet unlinked (they unlink it
    /// after the lock is released): `close()` waits for them before it gives up the directory,
    /// so that nothing of this cache touches the directory once `close()` has returned.
    let trashBeingUnlinked = DispatchGroup()
    /// Set by a thread whose unlink of trash failed after the lock: `close()` then leaves no
    /// clean marker, so that the next open sweeps the file.
    let trashUnlinkFailures = TrashUnlinkFailures()
    /// Set when a file could not be deleted: then `close()` leaves no clean marker, and the
    /// next open sweeps the directory.
    var hasUndeletedFiles = false
    /// Keys with value files that could not be deleted. A journal rebuild keeps a `REMOVE` line
    /// for each key no longer in the index, so that the next open still knows the files are
    /// the cache's to sweep.
    var undeletedKeys: Set<String> = []
    var trashCounter = 0
    /// Opened with ``DiskLRUCache/Options/isReadOnly``: nothing is ever written, created or
    /// deleted, and each read is checked against what the writer appended since (`readOnlyView`).
    let isReadOnly: Bool
    /// For a read-only cache: the journal as replayed, and what changed in it since.
    var readOnlyView: ReadOnlyView?
    /// Keys whose value file name is taken by a file the cache did not create; edits of them are
    /// refused, so that such a file is never replaced.
    var foreignKeys: Set<String> = []
    /// The format the journal on disk is read in: the journal's own, except when opening
    /// migrates a file-storage directory to packed storage.
    var replayFormat: Journal.Format
    /// Where changes go for ``DiskLRUCache/changes(bufferingKeys:)``: recorded here, under the
    /// lock, as they are journaled; delivered by the facade once the lock is released.
    let changes: ChangeHub<CacheChange>

    init(
        directory: CacheDirectory, storage: any ValueStorage, journal: JournalWriter, maxSize: Int,
        isReadOnly: Bool = false, changes: ChangeHub<CacheChange> = ChangeHub()
    ) {
        self.changes = changes
        self.directory = directory
        self.storage = storage
        self.records = storage.recordStorage
        self.recordReader = storage.recordReader
        self.journal = journal
        self.maxSize = maxSize
        self.isReadOnly = isReadOnly
        self.replayFormat = journal.format
    }

    var fileSystem: any FileSystem { directory.fileSystem }

    /// Whether a read appends a `READ` line: in file storage, whose journal the Java library
    /// reads (its LRU order follows them); never in packed storage, where a read writes nothing.
    var journalsReads: Bool { !journal.format.storesLocations }
    var valueCount: Int { storage.valueCount }

    /// The Java rule: rebuild when redundant lines reach 2000 and outnumber the entries.
    var isJournalRebuildRequired: Bool {
        redundantOpCount >= Journal.rebuildThreshold && redundantOpCount >= table.count
    }

    /// Counts the line a commit makes redundant. In file storage every commit does (its `DIRTY`
    /// line, as the Java library counts); in packed storage only one that replaces a line of
    /// its key (a committed entry, or a journaled `DIRTY`): the `CLEAN` line of a new key
    /// supersedes nothing, so a cache that only grows does not rewrite its journal, as replay
    /// counts (``CacheState`` sets the count to lines minus entries when it opens).
    mutating func noteSupersededLine(replacing: Bool) {
        if replacing || !journal.format.storesLocations { redundantOpCount += 1 }
    }

    /// Counts the lines that removing `count` entries makes redundant: the `REMOVE` lines, as
    /// Java counts, and in packed storage, for evictions, the lines they end too, so that a
    /// cache under churn (every new key evicting an old one, its size at the limit) rewrites its
    /// journal once it holds about twice its entries' lines, as it did when every commit
    /// counted. Explicit removals count one: a cache being emptied need not rewrite its
    /// journal ever more often as it shrinks.
    mutating func noteRemovedLines(_ count: Int, evicted: Bool) {
        redundantOpCount += evicted && journal.format.storesLocations ? 2 * count : count
    }

    var needsCleanup: Bool {
        isOverBudget || isJournalRebuildRequired || journal.failure != nil || isCompactionDue || isReserveDue
    }

    /// Whether packed segments' live bytes doubled since the space reserve was last sized:
    /// a cleanup pass sizes it again (``DiskLRUCache/scheduleCleanup()``), so that a cache that
    /// only grows, whose journal is never rewritten, still keeps a reserve that follows it.
    var isReserveDue = false
    /// The live bytes when ``isReserveDue`` was last set.
    var reserveSizedFor: Int64 = 0

    /// Whether packed segments hold enough garbage for a compaction pass, as of the last write
    /// or removal (reads make no garbage, so they never ask the storage).
    var isCompactionDue = false

    /// Whether writers must compact before they return (``SizeBudget``'s backpressure): set
    /// with ``isCompactionDue``, in a directory within its budget only.
    var isCompactionOverdue = false

    /// Notes whether the writes just made call for compaction.
    mutating func noteGarbage() {
        isCompactionDue = storage.needsCompaction
        isCompactionOverdue =
            isCompactionDue && budget.chargesKeys && storage.compactingStorage?.isCompactionOverdue == true
        if let live = storage.compactingStorage?.liveBytes, live / 2 > max(reserveSizedFor, 512 << 10) {
            reserveSizedFor = live
            isReserveDue = true
        }
    }

    /// Returns `true` when the caller must dispatch a background cleanup (once per batch).
    mutating func claimCleanup() -> Bool {
        guard !isClosed, !isReadOnly, needsCleanup, !isCleanupScheduled else { return false }
        isCleanupScheduled = true
        return true
    }

}
