#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// A value storage whose entries can each be held whole in one self-checking record: written
/// in one lock hold with no editor, and read back with one positioned read and no second lock
/// hold (the record's checksum covers its key and lengths, so a read that lost a race with a
/// commit or compaction sees a record that fails its check, or the values current at its plan).
///
/// What only such a storage does stays behind this protocol: the layers above reach it through
/// ``ValueStorage/recordStorage`` and ``ValueStorage/recordReader``, never by its type.
protocol RecordStorage: ValueStorage, AnyObject {
    /// The record of a whole-entry write, built outside the lock; `nil` when a value is too
    /// large to be inline (the write then takes the edit transaction).
    ///
    /// - Complexity: one allocation and one copy of each value.
    func encodeRecord(key: String, values: [Data]) -> [UInt8]?

    /// Appends `record`; returns where it starts.
    ///
    /// - Complexity: one `write` (plus a sync with `syncsWrites`).
    func append(_ record: [UInt8], key: String) throws(CacheError) -> ValueLocation

    /// Accounts for a record of `size` bytes at `location` that replaces `old` values.
    func noteCommitted(location: ValueLocation, size: Int64, replacing old: CommittedValues?)

    /// Whether every slot of the entry at `location` is in its record (none in a file), so
    /// that ``readRecord(key:location:lengths:cachedOnly:countsDamage:)`` reads it whole.
    func holdsInline(location: ValueLocation, lengths: SlotLengths) -> Bool

    /// Reads the record at `location` and checks it; with `cachedOnly`, only bytes already in
    /// memory, so that the call never sleeps on I/O. With `countsDamage` false, a damaged
    /// record is not counted: for a first attempt whose caller reads again the validating way.
    ///
    /// - Complexity: One `pread` (`preadv2` with `RWF_NOWAIT` when `cachedOnly`).
    func readRecord(
        key: String, location: ValueLocation, lengths: SlotLengths, cachedOnly: Bool, countsDamage: Bool
    ) throws(CacheError) -> RecordRead
}

/// What reading a record found.
enum RecordRead {
    case found(RecordBytes)
    /// Missing or damaged.
    case missing
    /// Reading it would wait for the disk (its segment not open, or its bytes not in the page
    /// cache): nothing was done.
    case notInMemory
}

extension RecordStorage {
    var recordStorage: (any RecordStorage)? { self }
    var recordReader: (any RecordReader)? { LentRecordStorage(reference: .passUnretained(self)) }

    /// The record at `location`, checked; `nil` when it is missing or damaged (counted).
    ///
    /// - Throws: ``CacheError/Code/ioFailure`` for a failure that is not damage.
    func readRecord(key: String, location: ValueLocation, lengths: SlotLengths) throws(CacheError) -> RecordBytes? {
        switch try readRecord(key: key, location: location, lengths: lengths, cachedOnly: false, countsDamage: true) {
        case .found(let record): return record
        case .missing, .notInMemory: return nil
        }
    }
}

/// The read half of a ``RecordStorage``, for the read path that runs on every thread at once.
protocol RecordReader: Sendable {
    /// See ``RecordStorage/holdsInline(location:lengths:)``.
    func holdsInline(location: ValueLocation, lengths: SlotLengths) -> Bool
    /// See ``RecordStorage/readRecord(key:location:lengths:cachedOnly:countsDamage:)``.
    func readRecord(
        key: String, location: ValueLocation, lengths: SlotLengths, cachedOnly: Bool, countsDamage: Bool
    ) throws(CacheError) -> RecordRead
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
    ) throws(CacheError) -> RecordRead {
        let result = reference._withUnsafeGuaranteedRef { storage in
            Result { () throws(CacheError) -> RecordRead in
                try storage.readRecord(
                    key: key, location: location, lengths: lengths, cachedOnly: cachedOnly, countsDamage: countsDamage)
            }
        }
        return try result.get()
    }
}
