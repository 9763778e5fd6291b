/// Counters of an ``ObjectCache`` since it was opened.
public struct ObjectCacheStatistics: Sendable, Hashable {
    /// Reads answered from memory.
    public var memoryHits = 0
    /// Reads answered from disk.
    public var diskHits = 0
    /// Reads that found nothing (including expired, incompatible and undecodable entries).
    public var misses = 0
    /// Stored values that failed to decode.
    public var decodeFailures = 0
    /// Values dropped from memory to stay under its limits (saved first when unsaved).
    public var memoryEvictions = 0
    /// Values written to disk, by `set` or `save`.
    public var saves = 0
    /// Entries found expired and removed.
    public var expirations = 0
    /// Values read in an earlier schema version and converted by a ``SchemaMigration``.
    public var migrations = 0

    /// All counters zero.
    public init() {}
}
