public import Synchronization

/// The versions of the values the stripes of one memory tier store, from one counter: a
/// value's version orders it against the values of every stripe (the most recently stored
/// have the highest), which is what a warm start records. Within a key, a newer write has a
/// higher version, which is what a save compares.
@usableFromInline
final class VersionClock: Sendable {
    @usableFromInline let last = Atomic<UInt64>(0)

    @usableFromInline init() {}

    /// A version higher than every one handed out before.
    ///
    /// - Complexity: O(1): one relaxed atomic add (stores already hold their stripe's lock).
    @inlinable
    func tick() -> UInt64 {
        last.add(1, ordering: .relaxed).newValue
    }
}
