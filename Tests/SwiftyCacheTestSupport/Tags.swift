public import Testing

extension Tag {
    /// Suites that take seconds to minutes (kills, fault sweeps, fuzzing, stress): select them
    /// with `swift test --filter "$(bash .ci/suites-tagged slow)"` (Swift 6.3's `swift test`
    /// cannot filter by tag itself).
    @Tag public static var slow: Self

    /// Suites whose threads meet: CI runs every suite with this tag under ThreadSanitizer on a
    /// release build (`.ci/suites-tagged concurrency` lists them). Tag a new concurrent suite so.
    @Tag public static var concurrency: Self

    /// Suites of the memory tier's lock-free reads: CI runs them under ThreadSanitizer with the
    /// `.concurrency` suites; `.ci/attack` also on a debug build, with its assertions and the
    /// engine's invariant walk.
    @Tag public static var lockFreeReads: Self
}

extension Tag {
    /// Suites CI runs under AddressSanitizer with leak detection (`.ci/asan`): packed storage,
    /// its crafted directories and durability, and the async overloads' I/O pool.
    @Tag public static var addressSanitized: Self
}
