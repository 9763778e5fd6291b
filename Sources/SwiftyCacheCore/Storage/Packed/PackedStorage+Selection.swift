extension StorageSelection {
    /// Packed storage (records in segments, slots above `inlineLimit` in files) over `directory`.
    static func recordStorage(
        directory: CacheDirectory, valueCount: Int, inlineLimit: Int, options: DiskLRUCache.Options
    ) -> any ValueStorage {
        PackedStorage(
            directory: directory, valueCount: valueCount, inlineLimit: inlineLimit, syncsWrites: options.syncsWrites,
            isReadOnly: options.isReadOnly, segmentSize: max(64, options.packedSegmentSize),
            growsSegments: options.growsPackedSegments, openSegmentLimit: options.maxOpenSegments)
    }
}
