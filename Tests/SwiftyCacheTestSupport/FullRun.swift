import Foundation
public import Testing

/// The one switch between the quick run and the full run of the tests.
///
/// `swift test` runs the quick run: every suite but those that take minutes (kills of real
/// processes, power cuts on a loop device, fault sweeps, fuzzing, stress runs, races between
/// processes). `SWIFTYCACHE_FULL_TESTS=1 swift test` runs them too; `.ci/run` sets it, so CI
/// runs everything.
public enum FullRun {
    /// Whether `SWIFTYCACHE_FULL_TESTS` is set to anything but `0` or nothing.
    public static let isEnabled: Bool = {
        let value = ProcessInfo.processInfo.environment["SWIFTYCACHE_FULL_TESTS"] ?? ""
        return !value.isEmpty && value != "0"
    }()
}

extension Trait where Self == ConditionTrait {
    /// Runs the test or suite only in the full run (``FullRun``): a slow one, which also carries
    /// the `.slow` tag.
    public static var fullRunOnly: Self {
        .enabled(if: FullRun.isEnabled, "slow: runs with SWIFTYCACHE_FULL_TESTS=1 (as CI does)")
    }
}
