#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

extension PackedStorage {
    /// The segments and their accounting.
    struct Segments {
        /// Segments open, by number: at most ``openLimit`` of them (and the active one), the
        /// least recently used closed first (see ``insertOpen(_:)``).
        private(set) var open: [UInt32: SegmentFile] = [:]
        /// How many segments stay open at most; the others are opened again when read.
        let openLimit: Int
        /// Advances each time a segment is opened: a read stamps its segment with it, so that a
        /// hit writes nothing once the segment carries the current stamp.
        private var useEpoch: UInt64 = 0
        /// Bytes of records (written, live or garbage) in each known segment.
        var recordBytes: [UInt32: Int64] = [:]
        /// Bytes of records the index names, in each known segment.
        var liveBytes: [UInt32: Int64] = [:]
        /// The segment appended to, and its size; `nil` until the first write of a session.
        var active: SegmentFile?
        var activeEnd: Int64 = 0
        var nextNumber: UInt32 = 1
        /// Segments compaction deleted: never reopened by a late reader.
        var retired: Set<UInt32> = []
        /// Sharing: descriptors holding the compaction claim of segments (see
        /// ``PackedStorage/claimForCompaction(_:)``), and segments another cache appends to.
        var claims: [UInt32: Int32] = [:]
        var busyElsewhere: Set<UInt32> = []
        /// Segments the journal names whose header is damaged: read, never deleted.
        var foreign: Set<UInt32> = []
        var corruptRecords = 0
        var isShutDown = false
        /// Segments written since they were last forced to stable storage, and whether a
        /// segment was created since the directory was: what ``makeDurable(operation:)`` syncs.
        var unsynced: Set<UInt32> = []
        var directoryUnsynced = false
        /// Whether ``active`` is in ``unsynced`` already.
        var isActiveUnsynced = false
        /// The identity of this session's log (``LogPrefix``): set when the directory's
        /// segments are its log, `nil` otherwise (no prefixes written).
        var logIdentity: UInt64?
        /// Bytes appended since the journal's last `TAIL` line: what an open after a crash
        /// would read of the log.
        var loggedBytesSinceTail: Int64 = 0
        /// The sums of ``recordBytes`` and ``liveBytes``, kept as they change: every operation
        /// asks whether compaction is due.
        private(set) var totalRecordBytes: Int64 = 0
        private(set) var totalLiveBytes: Int64 = 0

        init(openLimit: Int) {
            self.openLimit = max(1, openLimit)
        }

        /// Stops appending to the active segment: the next append opens a new one. A failed
        /// write or sync of the active segment ends it (a record after a torn one, or after
        /// pages the kernel may have dropped, would not be read back after a crash), as do a
        /// compaction that seals it, its removal and a close.
        mutating func endActive() {
            active = nil
            isActiveUnsynced = false
        }

        /// The open segment `number`, marked as just used; `nil` when it is not open.
        ///
        /// - Complexity: O(1): a lookup and, at most once per segment opened since, one store.
        func lookUp(_ number: UInt32) -> SegmentFile? {
            guard let segment = open[number] else { return nil }
            segment.markUsed(epoch: useEpoch)
            return segment
        }

        /// Keeps `segment` open; past ``openLimit``, the least recently used segment other than
        /// the active one is let go (its descriptor closes once no read holds it any more).
        ///
        /// - Complexity: O(``openLimit``) when one is let go, O(1) otherwise.
        mutating func insertOpen(_ segment: SegmentFile) {
            useEpoch &+= 1
            segment.markUsed(epoch: useEpoch)
            open[segment.number] = segment
            guard open.count > openLimit else { return }
            var eldest: SegmentFile?
            for candidate in open.values where candidate.number != active?.number && candidate !== segment {
                if eldest.map({ candidate.lastUse < $0.lastUse }) ?? true { eldest = candidate }
            }
            if let eldest { open[eldest.number] = nil }
        }

        /// Stops keeping segment `number` open (its descriptor closes once no read holds it).
        mutating func forgetOpen(_ number: UInt32) {
            open[number] = nil
        }

        /// Stops keeping every segment open.
        mutating func closeAll() {
            open.removeAll()
        }

        mutating func addRecordBytes(_ count: Int64, in segment: UInt32) {
            recordBytes[segment, default: 0] += count
            totalRecordBytes += count
        }

        mutating func addLiveBytes(_ count: Int64, in segment: UInt32) {
            liveBytes[segment, default: 0] += count
            totalLiveBytes += count
        }

        mutating func forget(_ segment: UInt32) {
            totalRecordBytes -= recordBytes.removeValue(forKey: segment) ?? 0
            totalLiveBytes -= liveBytes.removeValue(forKey: segment) ?? 0
            open[segment] = nil
            unsynced.remove(segment)
            if active?.number == segment {
                endActive()
            }
        }
    }
}
