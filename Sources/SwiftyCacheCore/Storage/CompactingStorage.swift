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

    /// Accounts for a live record copied from `old` to `new`.
    func noteMoved(from old: ValueLocation, to new: ValueLocation, size: Int64)

    /// Deletes a shared file whose live records were all copied out (after they are durable).
    func retire(_ number: UInt32)
}

extension CompactingStorage {
    var compactingStorage: (any CompactingStorage)? { self }
}
