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
    /// The largest value kept in a record; a larger one is a file.
    var inlineLimit: Int { get }

    /// The record of a whole-entry write, built outside the lock; `nil` when a value is too
    /// large to be inline (the write then takes the edit transaction).
    ///
    /// - Complexity: one allocation and one copy of each value.
    func encodeRecord(key: String, values: [Data]) -> [UInt8]?

    /// Appends the record of a whole-entry write to `buffer` (a batch's records, built outside
    /// the lock into one buffer); `false`, with `buffer` as it was, when a value is too large
    /// to be inline.
    ///
    /// - Complexity: one copy of each value.
    func appendRecord(key: String, values: [Data], to buffer: inout [UInt8]) -> Bool

    /// Appends `record`; returns where it starts.
    ///
    /// - Complexity: one `write` (plus a sync with `syncsWrites`).
    func append(_ record: [UInt8], key: String) throws(CacheError) -> ValueLocation

    /// Appends the record of a whole-entry commit; returns where it starts. In a directory
    /// whose segments are its log, the record carries its prefix (``LogPrefix``).
    ///
    /// - Complexity: one `write` (plus a sync with `syncsWrites`).
    func appendCommit(_ record: [UInt8], key: String) throws(CacheError) -> ValueLocation

    /// Where other caches write the directory too: appends the record of a commit before the
    /// operation lock is taken; `nil`, having written nothing, when it must be appended under
    /// the lock (``PackedStorage/appendBeforeOperationLock(_:key:)``).
    ///
    /// - Complexity: one `write` (plus a sync with `syncsWrites`).
    func appendBeforeOperationLock(_ record: [UInt8], key: String) throws(CacheError) -> ValueLocation?

    /// Appends a batch's records (each a range of `records`, `nil` for a removal) with one
    /// `write`; returns where each record starts. In a directory whose segments are its log,
    /// removals are written too.
    ///
    /// - Complexity: one `write` (plus a sync with `syncsWrites`); no copy of the records
    ///   unless the segments are a log (each record then follows its prefix).
    func appendBatch(_ members: [BatchRecord], records: [UInt8]) throws(CacheError) -> [ValueLocation]

    /// Appends a group's commits with one `write` and no sync
    /// (``PackedStorage/appendGroup(_:)``): where the write starts, and each record.
    func appendGroup(_ commits: [(key: String, record: [UInt8])]) throws(CacheError)
        -> (start: ValueLocation, locations: [ValueLocation])

    /// Forces the segment a group was appended to to stable storage.
    func syncGroup(segment number: UInt32) throws(CacheError)

    /// Starts writing prefixes checked under `identity` (``PackedStorage/beginLog(identity:)``).
    func beginLog(identity: UInt64)

    /// Where the next append goes (``PackedStorage/logPosition``).
    var logPosition: ValueLocation { get }

    /// Bytes appended since the journal's last `TAIL` line.
    var loggedBytesSinceTail: Int64 { get }

    /// Notes that a `TAIL` line naming ``logPosition`` was journaled.
    func noteTailJournaled()

    /// Reads the log from `tail` (``PackedStorage/scanLog(from:identity:_:)``).
    func scanLog(from tail: ValueLocation, identity: UInt64, _ apply: ([LoggedChange]) -> Void) -> Int

    /// Accounts for a record of `size` bytes at `location` that replaces `old` values.
    func noteCommitted(location: ValueLocation, size: Int64, replacing old: CommittedValues?)

    /// The bytes of the record of an entry with `lengths` (its file slots outside it).
    func recordSize(lengths: SlotLengths) -> Int64

    /// ``noteCommitted(location:size:replacing:)`` for each of a batch's records, in one lock
    /// hold.
    func noteCommitted(_ commits: [(location: ValueLocation, size: Int64, replacing: CommittedValues?)])

    /// Whether every slot of the entry at `location` is in its record (none in a file), so
    /// that ``readRecord(key:location:lengths:cachedOnly:countsDamage:)`` reads it whole.
    func holdsInline(location: ValueLocation, lengths: SlotLengths) -> Bool

    /// Reads the record at `location` and checks it; with `cachedOnly`, only bytes already in
    /// memory, so that the call never sleeps on I/O. With `countsDamage` false, a damaged
    /// record is not counted: for a read whose caller learns under the lock whether the record
    /// is still the entry's (``noteDamagedRecord()``), or not (compaction moved it meanwhile).
    ///
    /// - Complexity: One `pread` (`preadv2` with `RWF_NOWAIT` when `cachedOnly`).
    func readRecord(
        key: String, location: ValueLocation, lengths: SlotLengths, cachedOnly: Bool, countsDamage: Bool
    ) throws(CacheError) -> ReadResult<RecordBytes>

    /// Counts a damaged record that a read with `countsDamage` false found, once the caller
    /// knows it is the entry's record.
    func noteDamagedRecord()
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
        case .missing, .needsIO: return nil
        }
    }
}

/// One member of a batch's append (``RecordStorage/appendBatch(_:records:)``): where a set's
/// record is in the batch's buffer, or a removal (`nil`).
struct BatchRecord {
    var key: String
    var record: Range<Int>?
}
