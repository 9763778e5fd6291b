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
    func publish(key: String, staged: [StagedSlot?]) throws(PublishFailure) -> ValueLocation

    /// Deletes an edit's staged slots. Returns `false` if something could not be deleted (the
    /// next open sweeps it).
    func discard(key: String, staged: [StagedSlot?]) -> Bool

    /// Opens the committed values of `key`, checking them against `lengths`; `nil` when they
    /// are missing or damaged (the caller drops the entry and reads a miss).
    ///
    /// - Throws: ``CacheError/Code/ioFailure`` for a failure that is not damage (too many open
    ///   files, for example).
    func open(key: String, location: ValueLocation, lengths: [Int]) throws(CacheError) -> OpenedValues?

    /// Reads up to `buffer.count` bytes of an opened slot at `offset`; fewer only at its end.
    func read(
        _ values: OpenedValues, slot: Int, key: String, into buffer: UnsafeMutableRawBufferPointer, at offset: Int
    ) throws(CacheError) -> Int

    /// Releases opened values.
    func close(_ values: OpenedValues)

    /// Deletes the committed values of `key`. Returns `false` if something could not be deleted.
    func delete(key: String, location: ValueLocation) -> Bool

    /// Deletes every file of `key`, committed or staged: what an interrupted edit may have left.
    func deleteEverything(of key: String) -> Bool

    /// What the file called `name` is to this storage: a value or a staged value of some key,
    /// or `nil` for a name the storage never creates. The cache deletes a file only when this
    /// names it *and* the journal names its key, so a user's file that merely looks like one
    /// (`notes.0`) is never deleted.
    func classify(fileNamed name: String) -> StoredFileName?

    /// The path an error about `slot` of `key` names.
    func path(key: String, slot: Int, staged: Bool) -> String
}

/// Where a committed entry's values are, as the storage recorded it when publishing. File
/// storage needs nothing beyond the key (``none``); a storage that appends records to shared
/// segment files records the segment and the record's offset.
struct ValueLocation: Hashable, Sendable {
    var segment: UInt32
    var offset: Int64

    static let none = ValueLocation(segment: 0, offset: 0)
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
    var descriptors: [Int32]
    /// Each slot's first byte in its file; empty when every slot starts at 0 (file storage).
    var offsets: [Int64] = []

    func offset(of slot: Int) -> Int64 { offsets.isEmpty ? 0 : offsets[slot] }
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
