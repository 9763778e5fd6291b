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

    /// What the file called `name` is to this storage: a value or a staged value of some key,
    /// or `nil` for a name the storage never creates. The cache deletes a file only when this
    /// names it *and* the journal names its key, so a user's file that merely looks like one
    /// (`notes.0`) is never deleted.
    func classify(fileNamed name: String) -> StoredFileName?

    /// The path an error about `slot` of `key` names.
    func path(key: String, slot: Int, staged: Bool) -> String

    /// Whether `name` is a file the storage shares between entries (a segment), which the
    /// storage itself accounts for and deletes: the sweep leaves it to ``recover(table:wipe:closedCleanly:)``.
    func isSharedFile(named name: String) -> Bool

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
    func makeDurable(operation: String) throws(CacheError)

    /// Records found damaged by reads since the cache opened (packed storage's checksums).
    var corruptRecordCount: Int { get }

    /// Whether enough garbage has piled up in shared files for a compaction pass.
    var needsCompaction: Bool { get }

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
}

extension ValueStorage {
    func isSharedFile(named name: String) -> Bool { false }
    func isOwnSharedFile(atPath path: String) -> Bool { false }
    func recover(table: EntryTable, wipe: Bool, closedCleanly: Bool) {}
    func shutDown() {}
    func makeDurable(operation: String) throws(CacheError) {}
    func deletesWithoutJournal(location: ValueLocation, lengths: SlotLengths) -> Bool { true }
    var corruptRecordCount: Int { 0 }
    var needsCompaction: Bool { false }
    func stagesFiles(forLengths lengths: SlotLengths) -> Bool { true }
    func keepsFiles(location: ValueLocation, lengths: SlotLengths) -> Bool { true }
    func isFileSlot(_ slot: Int, location: ValueLocation, lengths: SlotLengths) -> Bool { true }
    func deleteReplacedFiles(key: String, old: CommittedValues, location: ValueLocation, lengths: SlotLengths) -> Bool {
        true
    }
}

/// The committed state of an entry an edit replaces: publishing keeps the slots it does not
/// rewrite, and retires the old values.
struct CommittedValues {
    var location: ValueLocation
    var lengths: SlotLengths
}

/// Where a committed entry's values are, as the storage recorded it when publishing. File
/// storage needs nothing beyond the key (``none``); a storage that appends records to shared
/// segment files records the segment and the record's offset.
package struct ValueLocation: Hashable, Sendable {
    package var segment: UInt32
    package var offset: Int64

    package init(segment: UInt32, offset: Int64) {
        self.segment = segment
        self.offset = offset
    }

    package static let none = ValueLocation(segment: 0, offset: 0)
}

/// A file name the storage creates, taken apart.
struct StoredFileName: Hashable, Sendable {
    var key: String
    var slot: Int
    /// Whether it holds a staged value (`key.N.tmp`), not a committed one.
    var isStaged: Bool
}

/// A slot value an edit has written but not yet published.
struct StagedSlot: Hashable, Sendable {
    /// The value's length in bytes.
    var length: Int
    /// The bytes of a value small enough to go into a packed record; `nil` when the value is
    /// in a staged file (`key.N.tmp`).
    var inline: [UInt8]? = nil
}

/// A publish that failed, and whether it had already published some slots (then the entry can
/// hold neither its old values nor its new ones, and must be dropped).
struct PublishFailure: Error {
    var error: CacheError
    var publishedAny: Bool
}

/// An entry's values opened for reading: one descriptor per slot and, for storages that keep
/// several values in one file, where each slot starts in it.
struct OpenedValues: Sendable {
    /// One descriptor per slot; `-1` for a slot whose bytes are in ``record``. Empty when
    /// every slot is in ``record``.
    var descriptors: [Int32]
    /// A packed record read whole and checked, holding the inline slots.
    var record: RecordBytes? = nil
}

/// The bytes of a packed record, read and checked once, shared by the snapshot that opened
/// it: the snapshot reads the values as they were, whatever compaction or later commits do.
///
/// The bytes are a plain allocation, not an array: the arrays a read made here went through the
/// standard library's unspecialized allocation, which looks the array's type up in the
/// runtime's metadata table on every call (about 5% of two packed readers' time in `perf`),
/// and that table's reader count is memory every reading core writes.
final class RecordBytes: @unchecked Sendable {
    // @unchecked Sendable is sound: `storage` is written only before `init` returns (the
    // reader fills it, then hands it over), never afterwards, and deallocated in deinit, when
    // no reference to the object is left. Every other stored property is an immutable value.
    /// The record; immutable once the object exists.
    private let storage: UnsafeMutableRawBufferPointer
    /// Where each slot's value starts in the record, `-1` for a slot kept in a file (held
    /// inline as the lengths are: no array to allocate per read).
    let offsets: SlotLengths
    let lengths: SlotLengths

    /// Takes over `storage`, which must come from `UnsafeMutableRawBufferPointer.allocate`.
    init(taking storage: UnsafeMutableRawBufferPointer, offsets: SlotLengths, lengths: SlotLengths) {
        self.storage = storage
        self.offsets = offsets
        self.lengths = lengths
    }

    deinit {
        storage.deallocate()
    }

    /// The record's size in bytes.
    var count: Int { storage.count }

    /// A copy of the whole record (compaction writes it again).
    var bytes: [UInt8] { Array(UnsafeRawBufferPointer(storage)) }

    /// A copy of the `length` bytes from `start`.
    func bytes(from start: Int, count length: Int) -> [UInt8] {
        Array(UnsafeRawBufferPointer(rebasing: storage[start..<(start + length)]))
    }

    /// All of inline slot `slot`, copied once into a `Data`.
    func data(slot: Int) -> Data {
        let start = offsets[slot]
        let length = lengths[slot]
        guard let base = storage.baseAddress, length > 0 else { return Data() }
        return Data(bytes: base + start, count: length)
    }

    /// Copies up to `buffer.count` bytes of `slot` from `offset`; fewer only at its end.
    func read(slot: Int, into buffer: UnsafeMutableRawBufferPointer, at offset: Int) -> Int {
        let available = max(0, lengths[slot] - offset)
        let count = min(available, buffer.count)
        guard count > 0 else { return 0 }
        let start = offsets[slot] + offset
        buffer.copyMemory(from: UnsafeRawBufferPointer(rebasing: storage[start..<(start + count)]))
        return count
    }
}

/// Receives the bytes of one slot being staged.
protocol SlotSink: AnyObject {
    /// The number of bytes written so far.
    var count: Int { get }
    /// Appends bytes to the slot.
    func write(_ bytes: UnsafeRawBufferPointer) throws(CacheError)
}

extension ValueStorage {
    /// Reads all `length` bytes of an opened slot into memory that the `Data` then owns (no
    /// zero-filling first).
    ///
    /// - Throws: ``CacheError/Code/ioFailure``, or ``CacheError/Code/corruptValue`` when the
    ///   slot holds fewer bytes than recorded.
    func readWhole(_ values: OpenedValues, slot: Int, length: Int, key: String) throws(CacheError) -> Data {
        guard length > 0 else { return Data() }
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: length, alignment: 16)
        var total = 0
        do {
            while total < length {
                let count = try read(
                    values, slot: slot, key: key, into: UnsafeMutableRawBufferPointer(rebasing: buffer[total...]),
                    at: total)
                if count == 0 { break }
                total += count
            }
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
