/// What ``CacheState/maxSize`` bounds, per storage.
///
/// File storage counts what the Java library counts: the bytes of the values, nothing else
/// (a directory moves between the two with the same entries).
///
/// Packed storage, with `Options.maxSizeBoundsDirectory`, bounds its directory. Each entry is
/// charged its values, its record's header and, about, its line in the journal; the entries
/// together may take two thirds of `maxSize` less half the smallest segment the cache rolls at
/// and 96 KiB (two fifths of `maxSize` at least). The rest is the room a log needs under
/// churn: garbage (replaced, removed and evicted records) up to half the live bytes and half a
/// segment before compaction reclaims it, journal lines that no longer describe an entry, and
/// the space reserve (an eighth of the live bytes). Writers that find compaction half a segment
/// behind that compact before they return (`DiskLRUCache.reclaimOverdueGarbage()`). The
/// directory then stays near `maxSize` however fast the cache is written over
/// (docs/PERFORMANCE.md, "Footprint under churn"), rather than near twice it.
struct SizeBudget: Sendable, Equatable {
    /// Bytes charged per entry besides its values: none when only values count.
    let entryOverhead: Int
    /// Whether half of each key's length is charged too (a packed journal line names its key,
    /// a rebuilt one in about half its length for the hexadecimal keys typed caches write).
    let chargesKeys: Bool
    /// The smallest segment packed storage rolls at; 0 for file storage.
    let segmentSize: Int

    /// Room for the journal's redundant lines, which Java's rule lets reach 2000 (of about a
    /// hundred bytes each) before a rebuild, whatever the cache's size: a tenth of a 1 MiB cache.
    static let journalAllowance = 96 << 10

    /// The Java rule: values only.
    static let values = SizeBudget(entryOverhead: 0, chargesKeys: false, segmentSize: 0)

    /// The most the entries' ``chargedSize(values:entries:keyBytes:)`` may be under `maxSize`
    /// before eviction begins: `maxSize` itself when only values count.
    ///
    /// - Complexity: O(1).
    @inline(__always)
    func limit(maxSize: Int) -> Int {
        guard chargesKeys else { return maxSize }
        // At least two fifths of `maxSize`: below a few segments the segment term would leave
        // nothing.
        return max(maxSize / 5 * 2, maxSize / 3 * 2 - segmentSize / 2 - Self.journalAllowance)
    }

    /// What `entries` entries with `values` bytes of values and `keyBytes` bytes of keys in all
    /// are charged, saturating at `Int.max`.
    @inline(__always)
    func chargedSize(values: Int, entries: Int, keyBytes: Int) -> Int {
        guard chargesKeys else { return values }
        let (perEntry, overflow1) = entries.multipliedReportingOverflow(by: entryOverhead)
        let (withEntries, overflow2) = values.addingReportingOverflow(perEntry)
        let (total, overflow3) = withEntries.addingReportingOverflow(keyBytes / 2)
        return overflow1 || overflow2 || overflow3 ? Int.max : total
    }

    /// What one entry of `values` bytes and a key of `keyLength` bytes is charged.
    @inline(__always)
    func charge(values: Int, keyLength: Int) -> Int {
        chargedSize(values: values, entries: 1, keyBytes: keyLength)
    }
}
