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

    /// Whether a record here was written before one at `other`: segments are numbered in the
    /// order they are created and only the newest is appended to. Values in files
    /// (``none``) precede every record.
    func precedes(_ other: ValueLocation) -> Bool {
        segment != other.segment ? segment < other.segment : offset < other.offset
    }
}
