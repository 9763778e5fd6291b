/// Which value storage a cache opens a directory with: the layers above hold only
/// `any ValueStorage`.
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
            throw CacheError.storageMismatch(path: journalPath, found: found, requested: requested)
        }
    }

    /// The storage of ``format`` over `directory`. Each storage builds itself from the options
    /// in its own folder (`Storage/Files/`, `Storage/Packed/`): no layer names a concrete storage.
    func makeStorage(directory: CacheDirectory, valueCount: Int, options: DiskLRUCache.Options) -> any ValueStorage {
        switch format {
        case .files: Self.fileStorage(directory: directory, valueCount: valueCount, options: options)
        case .packed(let inlineLimit):
            Self.recordStorage(directory: directory, valueCount: valueCount, inlineLimit: inlineLimit, options: options)
        }
    }
}
