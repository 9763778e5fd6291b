// What crosses the storage seam (`ValueStorage`): a slot being staged and its sink, the values
// an edit replaces, the values a read opened, and a publish that failed.

/// Receives the bytes of one slot being staged.
protocol SlotSink: AnyObject {
    /// The number of bytes written so far.
    var count: Int { get }
    /// Appends bytes to the slot.
    func write(_ bytes: UnsafeRawBufferPointer) throws(CacheError)
}

/// A slot value an edit has written but not yet published.
struct StagedSlot: Hashable, Sendable {
    /// The value's length in bytes.
    var length: Int
    /// The bytes of a value small enough to go into a packed record; `nil` when the value is
    /// in a staged file (`key.N.tmp`).
    var inline: [UInt8]? = nil
}

/// The committed state of an entry an edit replaces: publishing keeps the slots it does not
/// rewrite, and retires the old values.
struct CommittedValues {
    var location: ValueLocation
    var lengths: SlotLengths
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

/// A publish that failed, and whether it had already published some slots (then the entry can
/// hold neither its old values nor its new ones, and must be dropped).
struct PublishFailure: Error {
    var error: CacheError
    var publishedAny: Bool
}

/// A change read back from a log of records (``RecordStorage/scanLog(from:identity:_:)``): a
/// set, with its lengths and its record's location, or a removal, and where it was written.
struct LoggedChange {
    var key: String
    /// The record's location for a set; where the removal was written for a removal.
    var position: ValueLocation
    /// The set's slot lengths; `nil` for a removal.
    var lengths: SlotLengths?
}
