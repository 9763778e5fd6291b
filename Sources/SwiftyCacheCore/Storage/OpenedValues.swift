/// An entry's values opened for reading: one descriptor per slot and, for storages that keep
/// several values in one file, where each slot starts in it.
struct OpenedValues: Sendable {
    /// One descriptor per slot; `-1` for a slot whose bytes are in ``record``. Empty when
    /// every slot is in ``record``.
    var descriptors: [Int32]
    /// A packed record read whole and checked, holding the inline slots.
    var record: RecordBytes? = nil
}
