#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Small values packed into append-only segment files, in the spirit of Bitcask: a commit
/// appends *one* record holding the key, the slot lengths and every inline slot's bytes
/// (``PackedRecord``), with one `write`; the journal's `CLEAN` line then names the record's
/// segment and offset. Slots longer than ``inlineLimit`` stay files (`key.N`, as in
/// ``FileStorage``), so large values and streaming are unchanged.
///
/// A directory in packed storage holds:
///
///     journal                  the journal, with the packed header (see ``Journal``)
///     segment-00000001.pack    16-byte header "swiftycache.seg\n", then records back to back
///     segment-00000002.pack    the active segment, appended to; rolls past 4 MiB
///     3f2a….1                  a slot above the inline limit, as in file storage
///
/// - **Reads** are one `pread` of the whole record from a segment descriptor kept open, then a
///   check of its checksum, key and lengths: a record that fails is a miss, the entry is
///   dropped and counted in ``corruptRecordCount``; wrong bytes are never returned. The record
///   is then in memory, so a snapshot reads it as it was whatever happens next.
/// - **Garbage**: a record replaced, removed or evicted stays in its segment until compaction
///   (``CacheState/compact(segment:)``) copies the live records of the segment with the most
///   garbage to the active one, journals `MOVE` lines and deletes the segment.
/// - **Crash safety**: a record is written before the `CLEAN` line that names it, and a
///   segment is deleted only after the `MOVE` lines of everything copied out of it; a record
///   torn by a crash is never named by the journal, and a session never appends after a tail
///   it did not write itself (after a crash, writing starts in a new segment).
///
/// Accounting (``Segments``) is guarded by the storage's own lock, taken inside the cache
/// lock or alone, never the other way round.
final class PackedStorage: CompactingStorage {
    let directory: CacheDirectory
    let valueCount: Int
    /// Slots longer than this many bytes are files; the directory's journal records it.
    let inlineLimit: Int
    let syncsWrites: Bool
    let isReadOnly: Bool
    /// Whether other caches write the directory too (``DiskLRUCache/Sharing/processes``): each
    /// appends to segments of its own, locked (`flock`) while it appends to them, and a
    /// segment is compacted only once nobody holds that lock (``claimForCompaction(_:)``).
    let isShared: Bool
    /// The slots kept in files, with file storage's names and rules.
    let files: FileStorage
    /// A segment rolls once it holds this many bytes (or more: see ``rollSize(liveBytes:)``).
    let segmentSize: Int64
    /// Whether segments grow with the cache.
    let growsSegments: Bool
    let state: LockedState<Segments>

    /// How many segment descriptors the storage keeps open at most.
    let openSegmentLimit: Int

    static let segmentHeader = Array("swiftycache.seg\n".utf8)

    /// The segments a storage keeps open when it is not told: a sixteenth of the process's
    /// descriptor limit (16 under iOS's 256, 64 under Linux's usual 1,024), from 8 to 256, so
    /// that several caches and the app's own files fit beside them.
    static func defaultOpenSegmentLimit(descriptorLimit: Int? = ProcessLimits.openFiles()) -> Int {
        min(256, max(8, (descriptorLimit ?? 4096) / 16))
    }
    static let defaultSegmentSize: Int64 = 4 << 20
    /// The most a growing segment holds.
    static let largestSegmentSize: Int64 = 256 << 20

    /// The size at which the active segment rolls when the segments hold `liveBytes` of live
    /// records: ``segmentSize`` or, when segments grow, a sixteenth of the live bytes up to
    /// 256 MiB (``smallestSegmentSize`` at least). Ten million entries of 340 bytes are then
    /// about twenty segments, which a handful of descriptors keep open (a thousand 4 MiB ones
    /// were reopened on most random reads: a fifth of a get's time at that size). The space
    /// reserve holds an eighth of the live bytes, so one segment's records always fit in it.
    func rollSize(liveBytes: Int64) -> Int64 {
        guard growsSegments else { return segmentSize }
        return max(smallestSegmentSize, min(Self.largestSegmentSize, liveBytes / 16))
    }

    /// The least a growing segment holds: ``segmentSize``, or a sixteenth of the cache's
    /// `maxSize` when that is less (but 256 KiB at least: smaller segments made random churn
    /// slower, compaction copying more and creating and deleting more files), so that a small
    /// cache's garbage is reclaimed in pieces nearer its own size than 4 MiB.
    let smallestSegmentSize: Int64

    /// The least ``smallestSegmentSize`` is.
    static let smallestSegmentFloor: Int64 = 256 << 10

    init(
        directory: CacheDirectory, valueCount: Int, inlineLimit: Int, syncsWrites: Bool, isReadOnly: Bool,
        segmentSize: Int64 = PackedStorage.defaultSegmentSize, growsSegments: Bool = false,
        maxSize: Int = Int.max, openSegmentLimit: Int? = nil, isShared: Bool = false
    ) {
        self.isShared = isShared
        self.growsSegments = growsSegments
        smallestSegmentSize = min(segmentSize, max(Self.smallestSegmentFloor, Int64(clamping: maxSize) / 16))
        self.directory = directory
        self.valueCount = valueCount
        self.inlineLimit = inlineLimit
        self.syncsWrites = syncsWrites
        self.isReadOnly = isReadOnly
        self.segmentSize = segmentSize
        self.files = FileStorage(directory: directory, valueCount: valueCount, syncsWrites: syncsWrites)
        let openSegmentLimit = openSegmentLimit ?? Self.defaultOpenSegmentLimit()
        self.openSegmentLimit = openSegmentLimit
        self.state = LockedState(Segments(openLimit: openSegmentLimit))
    }

    var fileSystem: any FileSystem { directory.fileSystem }

    // MARK: Names

    func segmentPath(_ number: UInt32) -> String { directory.path(CacheFileName.segment(number).name) }

    func path(key: String, slot: Int, staged: Bool) -> String { files.path(key: key, slot: slot, staged: staged) }

    var sharesFiles: Bool { true }

    func isOwnSharedFile(atPath path: String) -> Bool {
        guard let fd = try? fileSystem.open(path, flags: OpenFlags.readOnly, mode: 0) else { return false }
        return SegmentFile(number: 0, fd: fd, fileSystem: fileSystem).hasValidHeader()
    }

    var corruptRecordCount: Int { state.withLock { $0.corruptRecords } }

    /// The size of the record of an entry with `lengths`; 0 when it has none.
    func recordSize(lengths: SlotLengths) -> Int64 {
        Int64(PackedRecord.size(lengths: lengths, inlineLimit: inlineLimit) ?? 0)
    }

    /// Whether `slot` of an entry at `location` with `lengths` is a file.
    func isFileSlot(_ slot: Int, location: ValueLocation, lengths: SlotLengths) -> Bool {
        location.segment == 0 || PackedRecord.isExternal(length: lengths[slot], inlineLimit: inlineLimit)
    }

}
