extension DiskLRUCache {
    /// Options for opening a cache.
    public struct Options: Sendable, Hashable {
        /// Whether every change forces its bytes to stable storage before it returns, so that a
        /// power loss cannot undo a change that returned: a commit syncs its value files (or
        /// record), the journal and the directory; a removal, `evictAll` and eviction sync the
        /// journal lines that record them (an eviction a commit makes, with the commit's sync).
        ///
        /// In ``Storage/packed`` storage the segments become the directory's log (once, when
        /// the first cache with this option opens it; releases before that refuse the
        /// directory afterwards): a commit of small values syncs the segment its record is
        /// appended to and nothing else, as does a ``DiskLRUCache/write(_:)-98lou`` batch, and the
        /// commits of concurrent callers share one sync (each returns once its own is
        /// durable, and is visible to readers only from then on). An open after a crash reads
        /// back from the segments the commits whose journal lines were lost. A call that
        /// throws after its record was synced may still show after such an open; an entry
        /// evicted just before the crash may come back until the next eviction.
        ///
        /// Without it (the default), a killed process loses nothing that returned, and a power
        /// loss may drop recent changes (a key written since may read as its earlier value or
        /// as a miss) but nothing older: whatever replaces or deletes bytes already on disk (a
        /// journal rebuild, a compacted segment) is synced first, once per rebuild or segment.
        /// A value file the loss left at its length but never written (zeros) is dropped by the
        /// next open (``RecoveryReport/droppedUnwrittenValues``), never read as a value.
        ///
        /// "Stable storage": on Linux and Android, `fsync(2)`; on Apple platforms
        /// `fcntl(F_FULLFSYNC)`, which also empties the drive's write cache (plain `fsync` there
        /// stops at the drive), falling back to `fsync` on a file system that refuses it.
        public var syncsWrites: Bool

        /// Whether the cache only reads: it writes, creates and deletes nothing (no journal
        /// line, no eviction, no lock file, no directory), and every mutating call throws
        /// ``CacheError/Code/readOnly``.
        ///
        /// Any number of read-only caches, in this process or others, may read a directory
        /// while one writer writes it, or one nobody can write (an archived, `chmod a-w`
        /// cache). A reader replays the journal as it is when it opens (and on
        /// ``DiskLRUCache/refresh()-3dgpe``); it takes no lock, so it never blocks the writer.
        /// Instead, each read checks the lines the writer appended since: an entry the writer
        /// has since changed or removed reads as a miss, never as a mix of two versions.
        public var isReadOnly: Bool

        /// Where values are kept: one file per slot (``Storage/files``, the default: the Java
        /// `DiskLruCache` format) or records in segment files (``Storage/packed``).
        public var storage: Storage {
            get { chosenStorage ?? .files }
            set { chosenStorage = newValue }
        }

        /// The storage the caller named; `nil` only through the deprecated
        /// `init(syncsWrites:readOnly:storage:)` given no storage, which `ObjectCache`'s
        /// deprecated initializer reads as its own default (packed, converting file storage).
        package var chosenStorage: Storage?

        /// Whether opening a file-storage directory with packed storage converts it (keeping
        /// its entries) instead of throwing ``CacheError/Code/storageMismatch``; a read-only
        /// cache reads it as file storage. For `ObjectCache`, whose directories were file
        /// storage before packed storage existed.
        package var migratesFileStorage = false

        /// The size at which packed segments roll; small in tests, so that a few entries span
        /// several segments. Set, it is fixed; left alone, segments grow with the cache (see
        /// ``growsPackedSegments``).
        package var packedSegmentSize: Int64 = 4 << 20 {
            didSet { growsPackedSegments = false }
        }
        /// Whether packed segments grow past ``packedSegmentSize`` as the cache grows (a
        /// sixteenth of the live bytes, up to 256 MiB), so that a cache of millions of entries
        /// is a few dozen segments that stay open rather than a thousand reopened on reads.
        package var growsPackedSegments = true
        /// How many segment files packed storage keeps open at most; `nil`, the default, is a
        /// sixteenth of the process's descriptor limit, from 8 to 256.
        package var maxOpenSegments: Int? = nil

        /// The bytes pinned entries (``DiskLRUCache/pin(_:)``) may take, which eviction by
        /// size passes by; `nil`, the default, is half of what the entries may take (half of
        /// `maxSize`, or of its share for entries with ``maxSizeBoundsDirectory``). A pin past it throws
        /// ``CacheError/Code/pinLimitExceeded``.
        public var maxPinnedSize: Int? = nil

        /// Whether `maxSize` bounds the directory rather than the values, in packed storage: each
        /// entry is then charged its record's header and journal line too, and the entries
        /// keep to about two thirds of `maxSize`, leaving the rest for what a log needs under
        /// churn (records awaiting compaction, the journal, a reserve for a full disk), so that
        /// the directory stays within `maxSize` and a quarter however often the cache is
        /// written over. `false`, the default, counts the values' bytes only, as the Java
        /// library does; a packed directory then takes up to about twice `maxSize` under churn.
        /// File storage always counts the values only (its files take whole blocks, which no
        /// budget of bytes bounds). `ObjectCache` sets this with packed storage.
        public var maxSizeBoundsDirectory = false

        /// Whether other processes may write the directory while this cache has it open:
        /// ``Sharing/singleProcess`` (the default: this cache is the directory's one writer)
        /// or ``Sharing/processes`` (every cache that opens it with this option writes, each
        /// taking the directory's lock for one operation at a time). See ``Sharing``.
        public var sharing: Sharing = .singleProcess

        /// Whether packed segments are compacted in the background (tests turn it off to see
        /// what an explicit `compact()` does alone).
        package var compactsInBackground = true

        /// - Parameters:
        ///   - syncsWrites: Whether every change is synced before it returns. The default is `false`.
        ///   - isReadOnly: Whether the cache only reads. The default is `false`.
        ///   - storage: Where values are kept. The default is ``Storage/files``.
        public init(syncsWrites: Bool = false, isReadOnly: Bool = false, storage: Storage = .files) {
            self.chosenStorage = storage
            self.syncsWrites = syncsWrites
            self.isReadOnly = isReadOnly
        }
    }

    /// Where a cache keeps its values. Chosen when a directory is created: opening a directory
    /// with the other storage throws ``CacheError/Code/storageMismatch`` and touches nothing.
    ///
    /// | | ``files`` | ``packed`` |
    /// | --- | --- | --- |
    /// | layout | `key.0`, `key.1`, … | records in `segment-N.pack`, large slots as files |
    /// | a small set costs | a file creation and rename per slot | one `write` |
    /// | a small value takes on disk | a whole block (4 KiB) per slot | its bytes and ~20 |
    /// | compatible with | Java `DiskLruCache`, OkHttp | this library |
    ///
    /// Both keep the same guarantees: the journal, LRU eviction by bytes, snapshots that read
    /// what they saw, crash safety, ``Options/syncsWrites``, read-only opening.
    public struct Storage: Sendable, Hashable, CustomStringConvertible {
        /// Slots up to this many bytes go into a packed record; longer ones stay files.
        /// `nil` for file storage.
        public let inlineLimit: Int?

        private init(inlineLimit: Int?) { self.inlineLimit = inlineLimit }

        /// One file per slot, the Java `DiskLruCache` layout: a directory moves between this
        /// library, the Java library and OkHttp.
        public static let files = Storage(inlineLimit: nil)

        /// Small values packed into append-only segment files (see ``packed(inlineLimit:)``),
        /// with the default inline limit, ``defaultInlineLimit``.
        public static let packed = Storage(inlineLimit: defaultInlineLimit)

        /// Packed storage: a commit appends one checksummed record with the key and every
        /// slot of at most `inlineLimit` bytes to a segment file; longer slots are files, as in
        /// ``files``. Replaced and removed records are reclaimed by background compaction.
        ///
        /// The limit is recorded in the directory when it is created; an existing directory
        /// keeps its own.
        ///
        /// - Parameter inlineLimit: From 0 (every non-empty slot in a file) to
        ///   ``maximumInlineLimit``; a value outside is clamped to that range.
        public static func packed(inlineLimit: Int) -> Storage {
            Storage(inlineLimit: max(0, min(inlineLimit, maximumInlineLimit)))
        }

        /// 1 MiB: the largest inline limit, for the API and for a directory's journal header. A
        /// record is read whole into memory, so its slots stay small. A header above it (a
        /// crafted file, or a directory an earlier release created with a larger limit) makes
        /// `init` throw ``CacheError/Code/notACacheDirectory``, touching nothing.
        public static let maximumInlineLimit = Journal.maximumInlineLimit

        /// 16 KiB. The benchmark's crossover workload finds a get from a record cheaper than
        /// from files up to between 16 and 64 KiB per slot (0.62× their time at 16 KiB, 1.22×
        /// at 64 KiB); below the crossover, so that a snapshot (which holds its record in
        /// memory) and compaction (which copies records) stay cheap (docs/PERFORMANCE.md).
        public static let defaultInlineLimit = 16 << 10

        public var description: String { inlineLimit.map { "packed(inlineLimit: \($0))" } ?? "files" }

        var format: Journal.Format { inlineLimit.map { .packed(inlineLimit: $0) } ?? .files }
    }
}
