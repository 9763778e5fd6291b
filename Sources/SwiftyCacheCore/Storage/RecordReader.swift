#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The read half of a ``RecordStorage``, for the read path that runs on every thread at once.
protocol RecordReader: Sendable {
    /// See ``RecordStorage/holdsInline(location:lengths:)``.
    func holdsInline(location: ValueLocation, lengths: SlotLengths) -> Bool
    /// See ``RecordStorage/readRecord(key:location:lengths:cachedOnly:countsDamage:)``.
    func readRecord(
        key: String, location: ValueLocation, lengths: SlotLengths, cachedOnly: Bool, countsDamage: Bool
    ) throws(CacheError) -> ReadResult<RecordBytes>
}
