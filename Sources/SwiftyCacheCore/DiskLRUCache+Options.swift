extension DiskLRUCache {
    /// Options for opening a cache.
    public struct Options: Sendable, Hashable {
        /// Whether each commit forces value files, the journal and the directory to stable
        /// storage with `fsync`, so that a power loss cannot drop a commit that returned.
        ///
        /// Without it (the default), a killed process loses no committed entry, but a power
        /// loss may drop recent commits; it never corrupts older ones.
        public var syncsWrites: Bool

        /// Whether the cache only reads: it writes, creates and deletes nothing (no journal
        /// line, no eviction, no lock file, no directory), and every mutating call throws
        /// ``CacheError/Code/readOnly``.
        ///
        /// Any number of read-only caches, in this process or others, may read a directory
        /// while one writer writes it, or one nobody can write (an archived, `chmod a-w`
        /// cache). A reader replays the journal as it is when it opens (and on
        /// ``DiskLRUCache/refresh()``); it takes no lock, so it never blocks the writer.
        /// Instead, each read checks the lines the writer appended since: an entry the writer
        /// has since changed or removed reads as a miss, never as a mix of two versions.
        public var readOnly: Bool

        /// - Parameters:
        ///   - syncsWrites: Whether commits `fsync`. The default is `false`.
        ///   - readOnly: Whether the cache only reads. The default is `false`.
        public init(syncsWrites: Bool = false, readOnly: Bool = false) {
            self.syncsWrites = syncsWrites
            self.readOnly = readOnly
        }
    }
}
