/// How far ``ObjectCache/trimMemory(_:)`` shrinks the memory tier. Unsaved values are never
/// dropped: one in the way is saved first, and stays in memory if the save fails.
///
/// ```swift
/// pages.trimMemory(.warning)                     // half the values go
/// pages.trimMemory(.keeping(fraction: 0.1))      // nine values in ten go
/// pages.trimMemory(.critical)                    // save, then keep nothing saved
/// ```
public enum MemoryTrim: Sendable, Hashable {
    /// Keeps the most recently used `fraction` (0 to 1) of the values in memory; the least
    /// recently used go first, a value read since eviction last passed it after the others.
    case keeping(fraction: Double)
    /// Saves the unsaved values (as one batch), then drops every value that is saved.
    case everything

    /// What the cache does on a memory-pressure warning: keeps half the values.
    public static let warning = MemoryTrim.keeping(fraction: 0.5)
    /// What the cache does when memory is critically short: ``everything``.
    public static let critical = MemoryTrim.everything
}
