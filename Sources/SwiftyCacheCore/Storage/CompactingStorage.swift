/// A record storage that keeps records in shared files and reclaims the space of superseded
/// ones by copying live records out of a file and deleting it (packed storage's segments).
///
/// The compaction driver (`DiskLRUCache.compact()`, the cleanup pass) and the state's half
/// (`CacheState+Compaction.swift`) reach it through ``ValueStorage/compactingStorage``.
protocol CompactingStorage: RecordStorage {
    /// The number of shared files known, which bounds a compaction pass.
    var sharedFileCount: Int { get }

    /// The bytes of live records.
    var liveBytes: Int64 { get }

    /// Whether garbage is so far past ``ValueStorage/needsCompaction`` that writers should
    /// reclaim it themselves.
    var isCompactionOverdue: Bool { get }

    /// The shared file with the most garbage, if any has some; the one being appended to is
    /// sealed first when it is the one and `sealingActive` allows it.
    func compactionCandidate(sealingActive: Bool) -> UInt32?

    /// The size of the record of an entry with `lengths`; 0 when it has none.
    func recordSize(lengths: SlotLengths) -> Int64

    /// Accounts for a live record copied from `old` to `new`.
    func noteMoved(from old: ValueLocation, to new: ValueLocation, size: Int64)

    /// Deletes a shared file whose live records were all copied out (after they are durable).
    func retire(_ number: UInt32)

    // Where other processes write the directory too (``DiskLRUCache/Sharing/processes``):

    /// Accounts for a record another cache committed at `location`, replacing the record of
    /// `replacing` (its location and size), if any.
    func noteOthersRecord(at location: ValueLocation, size: Int64, replacing: (location: ValueLocation, size: Int64)?)

    /// Accounts for a record another cache removed or moved away from.
    func noteOthersRelease(at location: ValueLocation, size: Int64)

    /// Whether compaction may copy out of shared file `number` and delete it: no cache is
    /// appending to it. Claimed, it stays claimed until retired or ``releaseClaims()``.
    func claimForCompaction(_ number: UInt32) -> Bool

    /// Lets go of the files claimed for compaction and not retired.
    func releaseClaims()

    /// Learns again which files hold live records, from `table`, after another cache rebuilt
    /// the journal: nothing is deleted, and the file being appended to stays.
    func relearn(table: EntryTable)
}

extension CompactingStorage {
    var compactingStorage: (any CompactingStorage)? { self }
}
