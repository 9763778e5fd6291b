extension DiskLRUCache {
    /// Options for opening a cache.
    public struct Options: Sendable, Hashable {
        /// Whether each commit forces value files, the journal and the directory to stable
        /// storage with `fsync`, so that a power loss cannot drop a commit that returned.
        ///
        /// Without it (the default), a killed process loses no committed entry, but a power
        /// loss may drop recent commits; it never corrupts older ones.
        public var syncsWrites: Bool

        /// - Parameter syncsWrites: Whether commits `fsync`. The default is `false`.
        public init(syncsWrites: Bool = false) {
            self.syncsWrites = syncsWrites
        }
    }
}
