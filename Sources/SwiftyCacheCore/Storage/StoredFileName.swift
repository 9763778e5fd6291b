/// A file name the storage creates, taken apart.
struct StoredFileName: Hashable, Sendable {
    var key: String
    var slot: Int
    /// Whether it holds a staged value (`key.N.tmp`), not a committed one.
    var isStaged: Bool
}
