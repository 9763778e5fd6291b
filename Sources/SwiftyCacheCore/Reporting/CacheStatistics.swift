/// How often the cache was used, since it was opened.
public struct CacheStatistics: Sendable, Hashable {
    /// Reads that found a readable entry.
    public var hitCount = 0
    /// Reads that found nothing (including entries dropped because their files were gone).
    public var missCount = 0
    /// Committed edits.
    public var writeCount = 0
    /// Entries evicted to stay under `maxSize`.
    public var evictionCount = 0
    /// Entries removed by `removeValue(forKey:)` or `evictAll()`.
    public var removeCount = 0
    /// Packed records that failed their checksum (or named another key) when read: each was
    /// a miss, and its entry was dropped. Always 0 in file storage.
    public var corruptRecordCount = 0
    /// Packed segments rewritten by compaction (their live records copied, the file deleted).
    public var compactedSegmentCount = 0

    /// All counts zero.
    public init() {}
}
