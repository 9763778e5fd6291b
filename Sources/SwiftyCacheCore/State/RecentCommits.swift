/// The index records a journal's replay committed last, in the journal's order: a crash can
/// only have left unwritten the values written shortly before it, and those are the last
/// commits the journal names (``CacheState/dropValuesLeftUnwritten(_:journalModified:removedKeys:)``).
///
/// A ring of ``capacity`` record numbers: a replay of any length keeps at most 16 KiB.
struct RecentCommits {
    /// How many of the last commits are kept: what bounds the files an open after a crash
    /// reads back (a value written 4,096 commits before a power cut is not checked).
    static let capacity = 4_096

    private var records: [UInt32] = []
    /// Where the next commit goes once the ring is full: the oldest one kept.
    private var oldest = 0

    /// Notes that the replay committed the entry in record `index`.
    ///
    /// - Complexity: O(1).
    mutating func note(_ index: Int) {
        guard index >= 0, let record = UInt32(exactly: index) else { return }
        if records.count < Self.capacity {
            records.append(record)
        } else {
            records[oldest] = record
            oldest = oldest == Self.capacity - 1 ? 0 : oldest + 1
        }
    }

    /// Calls `body` with each record noted, the newest first, until it returns `false`.
    func forEachNewestFirst(_ body: (Int) -> Bool) {
        let count = records.count
        for step in 0..<count {
            // From just before the oldest, backwards round the ring.
            let position = (oldest - 1 - step + 2 * count) % count
            guard body(Int(records[position])) else { return }
        }
    }
}
