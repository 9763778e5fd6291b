#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

extension PackedStorage {
    /// The segments and their accounting.
    struct Segments {
        /// Segments opened so far, by number.
        var open: [UInt32: SegmentFile] = [:]
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
        /// Segments the journal names whose header is damaged: read, never deleted.
        var foreign: Set<UInt32> = []
        var corruptRecords = 0
        var isShutDown = false
        /// Segments written since they were last forced to stable storage, and whether a
        /// segment was created since the directory was: what ``makeDurable(operation:)`` syncs.
        var unsynced: [UInt32: SegmentFile] = [:]
        var directoryUnsynced = false
        /// Whether ``active`` is in ``unsynced`` already.
        var isActiveUnsynced = false
        /// The sums of ``recordBytes`` and ``liveBytes``, kept as they change: every operation
        /// asks whether compaction is due.
        private(set) var totalRecordBytes: Int64 = 0
        private(set) var totalLiveBytes: Int64 = 0

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
            unsynced[segment] = nil
            if active?.number == segment {
                active = nil
                isActiveUnsynced = false
            }
        }
    }
}
