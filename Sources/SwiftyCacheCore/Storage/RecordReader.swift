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

/// A record storage lent to the read path without a retain. A read that retained the one
/// storage object (as a cast or an optional's unwrap does) would write its reference count, one
/// cache line every reading thread writes; that showed in two-reader profiles of packed gets.
/// This value is an unmanaged reference: copying it out of the facade retains nothing.
///
/// Valid while the facade that made it lives: the facade also holds the storage strongly
/// (``DiskLRUCache`` keeps both, and drops neither before it is deallocated).
struct LentRecordStorage<Storage: RecordStorage>: RecordReader {
    let reference: Unmanaged<Storage>

    func holdsInline(location: ValueLocation, lengths: SlotLengths) -> Bool {
        reference._withUnsafeGuaranteedRef { $0.holdsInline(location: location, lengths: lengths) }
    }

    func readRecord(
        key: String, location: ValueLocation, lengths: SlotLengths, cachedOnly: Bool, countsDamage: Bool
    ) throws(CacheError) -> ReadResult<RecordBytes> {
        let result = reference._withUnsafeGuaranteedRef { storage in
            Result { () throws(CacheError) -> ReadResult<RecordBytes> in
                try storage.readRecord(
                    key: key, location: location, lengths: lengths, cachedOnly: cachedOnly, countsDamage: countsDamage)
            }
        }
        return try result.get()
    }
}
