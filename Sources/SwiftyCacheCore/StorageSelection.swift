/// Which value storage a cache opens a directory with, and the storage itself: the one place
/// that names a concrete storage (the layers below hold `any ValueStorage`). Each storage takes
/// its own settings, plain values read here from the facade's options.
struct StorageSelection {
    /// The storage the cache writes with.
    var format: Journal.Format
    /// The storage the directory's journal is read with (file storage that this open converts
    /// to packed storage is replayed as file storage).
    var replayFormat: Journal.Format

    /// Agrees on a storage for a directory whose journal records `found` (`nil`: no journal),
    /// when the caller asks for `requested`. A packed directory keeps the inline limit it was
    /// created with; file storage is read as it is by a read-only cache, or converted with
    /// `migratesFileStorage`.
    ///
    /// - Throws: ``CacheError/Code/storageMismatch`` for a journal of the other storage.
    static func negotiate(
        found: Journal.Format?, requested: Journal.Format, options: DiskLRUCache.Options, journalPath: String
    ) throws(CacheError) -> StorageSelection {
        guard let found, found != requested else { return StorageSelection(format: requested, replayFormat: requested) }
        switch (found, requested) {
        case (.packed, .packed):
            return StorageSelection(format: found, replayFormat: found)
        case (.files, .packed) where options.migratesFileStorage && options.isReadOnly:
            return StorageSelection(format: .files, replayFormat: .files)  // nothing is written: read it as it is
        case (.files, .packed) where options.migratesFileStorage:
            return StorageSelection(format: requested, replayFormat: .files)
        default:
            throw CacheError.storageMismatch(path: journalPath, found: found.name, requested: requested.name)
        }
    }

    /// The storage of ``format`` over `directory`.
    func makeStorage(
        directory: CacheDirectory, valueCount: Int, maxSize: Int, options: DiskLRUCache.Options
    ) -> any ValueStorage {
        switch format {
        case .files:
            FileStorage(directory: directory, valueCount: valueCount, syncsWrites: options.syncsWrites)
        case .packed(let inlineLimit):
            PackedStorage(
                directory: directory, valueCount: valueCount, inlineLimit: inlineLimit,
                syncsWrites: options.syncsWrites,
                isReadOnly: options.isReadOnly, segmentSize: max(64, options.packedSegmentSize),
                growsSegments: options.growsPackedSegments, maxSize: maxSize,
                openSegmentLimit: options.maxOpenSegments, isShared: options.sharing.isShared)
        }
    }

    /// The bytes of the committed value files of a file-storage directory no cache has open.
    ///
    /// - Complexity: O(files in the directory).
    static func fileValueBytes(in directory: CacheDirectory) -> Int {
        FileStorage.valueBytes(in: directory)
    }
}
