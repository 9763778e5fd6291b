public import Testing

extension Tag {
    /// Suites that take seconds to minutes (kills, fault sweeps, fuzzing, stress): select or
    /// skip them with `swift test --filter tag:slow` or `swift test --skip tag:slow`.
    @Tag public static var slow: Self
}
