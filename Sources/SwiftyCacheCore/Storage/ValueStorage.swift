#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The seam between the index and journal (``CacheState``) and the bytes of the values.
///
/// The engine's state decides *what* happens to an entry; a value storage decides *where* its
/// bytes live. Every storage follows the same protocol of an edit:
///
/// 1. **Stage** each written slot, outside the cache lock, where no reader can see it
///    (``stage(key:slot:contents:)``, ``stage(key:slot:streaming:)``).
/// 2. **Publish** the staged slots under the cache lock, after the entry's `DIRTY` line is in
///    the journal and before its `CLEAN` line is written (``publish(key:staged:)``); it returns
///    the ``ValueLocation`` the index records. Or **discard** them (``discard(key:staged:)``).
/// 3. **Open** an entry's committed values for reading (``open(key:location:lengths:)``): the
///    opened values keep reading the same bytes whatever later commits, removals and evictions
///    do, until they are closed. **Read** them with positioned reads.
/// 4. **Delete** an entry's values when it is removed, evicted or replaced.
///
/// ``FileStorage`` keeps one file per slot, the Java `DiskLruCache` layout. A storage that
/// appends records to shared segment files fits the same steps: staging keeps small values in
/// memory, publishing appends one record and returns its segment and offset, opening pins the
/// segment, and deleting marks the record as garbage for compaction.
protocol ValueStorage: Sendable {
    /// The number of slots per entry.
    var valueCount: Int { get }

    /// Stages `contents` as the new value of `slot`.
    ///
    /// - Complexity: One file creation and write for file storage.
    func stage(key: String, slot: Int, contents: UnsafeRawBufferPointer) throws(CacheError) -> StagedSlot

    /// Stages the new value of `slot` as `body` writes it in pieces. If `body` throws, nothing is
    /// staged and its error is rethrown.
    func stage(key: String, slot: Int, streaming body: (any SlotSink) throws -> Void) throws -> StagedSlot

    /// Makes an edit's staged slots the entry's committed values; `nil` slots keep their
    /// committed value. Called under the cache lock.
    ///
    /// - Throws: ``PublishFailure``, which tells whether any slot was already published.
    func publish(key: String, staged: [StagedSlot?], committed: CommittedValues?) throws(PublishFailure)
        -> ValueLocation

    /// Deletes an edit's staged slots. Returns `false` if something could not be deleted (the
    /// next open sweeps it).
    func discard(key: String, staged: [StagedSlot?]) -> Bool

    /// Opens the committed values of `key`, checking them against `lengths`; `nil` when they
    /// are missing or damaged (the caller drops the entry and reads a miss).
    ///
    /// - Throws: ``CacheError/Code/ioFailure`` for a failure that is not damage (too many open
    ///   files, for example).
    func open(key: String, location: ValueLocation, lengths: SlotLengths) throws(CacheError) -> OpenedValues?

    /// Reads up to `buffer.count` bytes of an opened slot at `offset`; fewer only at its end.
    func read(
        _ values: OpenedValues, slot: Int, key: String, into buffer: UnsafeMutableRawBufferPointer, at offset: Int
    ) throws(CacheError) -> Int

    /// Releases opened values.
    func close(_ values: OpenedValues)

    /// Deletes the committed values of `key`. Returns `false` if something could not be deleted.
    func delete(key: String, location: ValueLocation, lengths: SlotLengths) -> Bool

    /// Deletes every file of `key`, committed or staged: what an interrupted edit may have left.
    func deleteEverything(of key: String) -> Bool

    /// Whether ``delete(key:location:lengths:)`` makes the values unreadable by itself, so that
    /// a removal the journal cannot record still lasts after a reopen: true for files (a
    /// missing file is a miss), false for a packed record (its `CLEAN` line still names a valid
    /// record until a journal line says otherwise).
    func deletesWithoutJournal(location: ValueLocation, lengths: SlotLengths) -> Bool

    /// The path an error about `slot` of `key` names.
    func path(key: String, slot: Int, staged: Bool) -> String

    /// Whether the storage keeps values in files shared between entries (segments), which it
    /// accounts for and deletes itself: the sweep leaves them to ``recover(table:wipe:closedCleanly:)``.
    var sharesFiles: Bool { get }

    /// Whether the shared file at `path` carries the storage's header: only then is it the
    /// cache's to delete.
    func isOwnSharedFile(atPath path: String) -> Bool

    /// Called once the journal is replayed (or the directory wiped, with `wipe`): the storage
    /// learns which of its shared files hold live values and deletes the others.
    func recover(table: EntryTable, wipe: Bool, closedCleanly: Bool)

    /// Releases what the storage holds open; called when the cache closes.
    func shutDown()

    /// Forces the value bytes written since the last call to stable storage, whatever
    /// ``Options/syncsWrites`` says: called before a journal rebuild replaces the journal and
    /// before shared files whose values were superseded are deleted, so that what replaces
    /// durable bytes is durable first. File storage has nothing to do: its files are renamed
    /// into place, and a rebuilt journal names the same files.
    func makeDurable(operation: CacheError.Operation) throws(CacheError)

    /// Records found damaged by reads since the cache opened (packed storage's checksums).
    var corruptRecordCount: Int { get }

    /// Whether enough garbage has piled up in shared files for a compaction pass.
    var needsCompaction: Bool { get }

    /// What the cache's `maxSize` counts in this storage.
    var sizeBudget: SizeBudget { get }

    /// Whether staging values of these lengths writes files (which a crash could leave, so the
    /// edit's `DIRTY` line must come first), rather than keeping them in memory.
    func stagesFiles(forLengths lengths: SlotLengths) -> Bool

    /// Whether committed values at `location` with `lengths` include files.
    func keepsFiles(location: ValueLocation, lengths: SlotLengths) -> Bool

    /// Whether `slot` of committed values at `location` with `lengths` is a file; the sweep
    /// deletes a live key's file that is not (a crash after a commit moved it into a record).
    func isFileSlot(_ slot: Int, location: ValueLocation, lengths: SlotLengths) -> Bool

    /// After a commit's `CLEAN` line: deletes the files of `old` values the new ones no longer
    /// use. Returns `false` if one could not be deleted.
    func deleteReplacedFiles(key: String, old: CommittedValues, location: ValueLocation, lengths: SlotLengths) -> Bool

    /// The committed values at `location`, read only from the kernel's caches:
    /// ``ReadResult/needsIO`` as soon as anything would wait for the disk. The caller
    /// checks under the lock that the entry did not change meanwhile.
    func readValuesIfCached(key: String, location: ValueLocation, lengths: SlotLengths) -> ReadResult<[Data]>

    // Capabilities: what only some storages do, reached without naming a storage's type.

    /// This storage, when it holds entries as self-checking records (``RecordStorage``).
    var recordStorage: (any RecordStorage)? { get }

    /// ``recordStorage``'s read half, lent without a retain (``LentRecordStorage``).
    var recordReader: (any RecordReader)? { get }

    /// This storage, when it compacts shared files (``CompactingStorage``).
    var compactingStorage: (any CompactingStorage)? { get }
}

extension ValueStorage {
    var sharesFiles: Bool { false }
    func isOwnSharedFile(atPath path: String) -> Bool { false }
    func recover(table: EntryTable, wipe: Bool, closedCleanly: Bool) {}
    func shutDown() {}
    func makeDurable(operation: CacheError.Operation) throws(CacheError) {}
    func deletesWithoutJournal(location: ValueLocation, lengths: SlotLengths) -> Bool { true }
    var corruptRecordCount: Int { 0 }
    var needsCompaction: Bool { false }
    var sizeBudget: SizeBudget { .values }
    func stagesFiles(forLengths lengths: SlotLengths) -> Bool { true }
    func keepsFiles(location: ValueLocation, lengths: SlotLengths) -> Bool { true }
    func isFileSlot(_ slot: Int, location: ValueLocation, lengths: SlotLengths) -> Bool { true }
    func deleteReplacedFiles(key: String, old: CommittedValues, location: ValueLocation, lengths: SlotLengths) -> Bool {
        true
    }
    func readValuesIfCached(key: String, location: ValueLocation, lengths: SlotLengths) -> ReadResult<[Data]> {
        .needsIO
    }
    var recordStorage: (any RecordStorage)? { nil }
    var recordReader: (any RecordReader)? { nil }
    var compactingStorage: (any CompactingStorage)? { nil }
}

extension ValueStorage {
    /// Every slot of opened values: a slot in a record already read (and checked) is one copy,
    /// the others are read whole.
    ///
    /// - Complexity: One copy per slot in a record; ``readWhole(_:slot:length:key:)`` per other
    ///   slot.
    func readAll(_ values: OpenedValues, lengths: SlotLengths, key: String) throws(CacheError) -> [Data] {
        var all: [Data] = []
        all.reserveCapacity(lengths.count)
        for slot in 0..<lengths.count {
            if let record = values.record, record.offsets[slot] >= 0 {
                all.append(record.data(slot: slot))
            } else {
                all.append(try readWhole(values, slot: slot, length: lengths[slot], key: key))
            }
        }
        return all
    }

    /// Reads all `length` bytes of an opened slot into memory that the `Data` then owns (no
    /// zero-filling first).
    ///
    /// - Throws: ``CacheError/Code/ioFailure``, or ``CacheError/Code/corruptValue`` when the
    ///   slot holds fewer bytes than recorded.
    func readWhole(_ values: OpenedValues, slot: Int, length: Int, key: String) throws(CacheError) -> Data {
        guard length > 0 else { return Data() }
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: length, alignment: 16)
        let total: Int
        do {
            total =
                try readUntilFull(buffer) { (rest, filled) throws(CacheError) -> Int? in
                    try read(values, slot: slot, key: key, into: rest, at: filled)
                } ?? 0
        } catch {
            buffer.deallocate()
            throw error
        }
        guard total == length, let base = buffer.baseAddress else {
            buffer.deallocate()
            throw CacheError.corruptValue(
                key: key, path: path(key: key, slot: slot, staged: false), found: total, recorded: length)
        }
        return Data(bytesNoCopy: base, count: length, deallocator: .custom { pointer, _ in pointer.deallocate() })
    }
}
