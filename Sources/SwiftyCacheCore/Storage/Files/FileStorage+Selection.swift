extension StorageSelection {
    /// File storage (one file per slot, the Java layout) over `directory`.
    static func fileStorage(
        directory: CacheDirectory, valueCount: Int, options: DiskLRUCache.Options
    ) -> any ValueStorage {
        FileStorage(directory: directory, valueCount: valueCount, syncsWrites: options.syncsWrites)
    }

    /// The bytes of the committed value files of a file-storage directory no cache has open.
    ///
    /// - Complexity: O(files in the directory).
    static func fileValueBytes(in directory: CacheDirectory) -> Int {
        FileStorage.valueBytes(in: directory)
    }
}
