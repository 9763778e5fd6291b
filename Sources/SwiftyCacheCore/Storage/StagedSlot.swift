/// A slot value an edit has written but not yet published.
struct StagedSlot: Hashable, Sendable {
    /// The value's length in bytes.
    var length: Int
    /// The bytes of a value small enough to go into a packed record; `nil` when the value is
    /// in a staged file (`key.N.tmp`).
    var inline: [UInt8]? = nil
}
