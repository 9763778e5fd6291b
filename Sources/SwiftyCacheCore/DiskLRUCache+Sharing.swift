extension DiskLRUCache {
    /// Who may write a directory while a cache has it open (``Options/sharing``).
    ///
    /// With ``singleProcess`` (the default) the cache holds the directory's lock from its
    /// open to its close: a second writer, in this process or another, throws
    /// ``CacheError/Code/directoryLocked``; others may only read
    /// (``Options/isReadOnly``). It is the Java `DiskLruCache`'s rule.
    ///
    /// With ``processes``, any number of caches, in any number of processes (an app and its
    /// extensions, a server's workers), open the directory and write it. Each operation that
    /// writes takes the directory's lock (`flock` on `journal.share`) within its own duration
    /// only. A set appends its record to a segment of its own, then takes the lock *shared*
    /// for one `write` of its journal line, so the sets of several processes append at once;
    /// removals, batches, evictions, compaction and rebuilds take it exclusively: each reads
    /// what the others journaled since it last looked (O(their lines)), appends its own lines,
    /// and releases the lock before it returns, so no lock is ever
    /// held between calls, while your code runs, or across a suspension (a process suspended
    /// between calls, as an app extension is, blocks nobody). A read takes no lock between
    /// processes: it first compares a count of changes the writers keep in `journal.share`
    /// (mapped into memory: one load, no system call, when nothing changed), and if it moved
    /// reads what was appended, so a read that begins after another process's write returned
    /// sees that write. `maxSize` bounds the directory for all of them together:
    /// whichever writes past it evicts. Each process appends its records to segments of its
    /// own; compaction copies records only out of segments no process is appending to.
    ///
    /// What the mode asks, and costs:
    /// - ``Storage/packed`` storage only (opening file storage this way throws
    ///   ``CacheError/Code/invalidConfiguration``): the Java format has one writer, and a
    ///   value file replaced by one process could be read by another mid-change. For the same
    ///   reason every slot must fit in a record: a value longer than the inline limit throws
    ///   ``CacheError/Code/invalidConfiguration``.
    /// - Every cache of the directory must use this mode: a single-process writer (of this
    ///   release or an earlier one) cannot open it while a sharing cache has it open, and the
    ///   other way round (``CacheError/Code/directoryLocked``). The files are those of packed
    ///   storage: a directory written this way opens in either mode, and in earlier releases.
    ///   The caches open at once must be of releases that follow the same sharing protocol
    ///   (its version is in `journal.share`): an open beside caches of another throws
    ///   ``CacheError/Code/directoryLocked``. As sets append at once, one killed in the middle
    ///   of its `write` can leave the start of its line joined to another set's whole line:
    ///   this release reads the pair as the whole line, and the cache that next opens the
    ///   directory alone rewrites the journal without it. A release of the earlier protocol
    ///   that opens the directory first after such a kill takes the pair for a damaged line,
    ///   and drops the keys it names (a miss, never a wrong value).
    /// - Eviction order is each process's view: reads write nothing, so a process does not
    ///   know what the others read, and evicts by the recency of its own reads and everyone's
    ///   writes.
    /// - With ``Options/syncsWrites`` a durable commit syncs its segment and then the journal
    ///   (two syncs; a single process's commits sync the segment alone), and commits of
    ///   concurrent threads do not share syncs.
    /// - Pins (``DiskLRUCache/pin(_:)``) hold for every cache: `journal.pins` is replaced under
    ///   the lock, and each cache reads it again at its next write when it changed.
    /// - A journal rebuild is written under the lock in one hold (the others wait for it,
    ///   about 20 ms per 100,000 entries); the others then read the new journal whole.
    /// - A clean close leaves no saved index unless the cache is the last one open; the next
    ///   open replays the journal.
    /// - A process stopped inside a write (in a debugger) holds the lock until it goes on or
    ///   ends: the others' reads go on, and their writes throw
    ///   ``CacheError/Code/directoryLocked`` after waiting 30 seconds, having changed nothing.
    public struct Sharing: Sendable, Hashable, CustomStringConvertible {
        private let sharesProcesses: Bool

        private init(sharesProcesses: Bool) { self.sharesProcesses = sharesProcesses }

        /// One writer: the cache holds the directory's lock while it is open.
        public static let singleProcess = Sharing(sharesProcesses: false)

        /// Every cache that opens the directory with this option may write it; see ``Sharing``.
        public static let processes = Sharing(sharesProcesses: true)

        /// Whether several processes write.
        var isShared: Bool { sharesProcesses }

        public var description: String { sharesProcesses ? "processes" : "singleProcess" }
    }
}
