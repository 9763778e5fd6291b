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
    /// Entries removed by `remove(_:)` or `evictAll()`.
    public var removeCount = 0

    /// All counts zero.
    public init() {}
}
