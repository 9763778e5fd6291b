import SwiftyCacheCore

#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif

extension Duration {
    /// The duration in seconds, as Foundation counts time.
    @inlinable
    var timeInterval: TimeInterval {
        let (seconds, attoseconds) = components
        return TimeInterval(seconds) + TimeInterval(attoseconds) / 1e18
    }

    /// Whether a value `age` seconds old is younger than this duration. Compared as durations
    /// (128-bit integers) where `age` fits in nanoseconds: ``timeInterval`` divides a 128-bit
    /// number, which costs as much as the clock read a fetch-through hit needs (29 ns against
    /// 8 ns here). A NaN age (a damaged date) is never younger.
    @inlinable
    func exceeds(age: TimeInterval) -> Bool {
        if age.isFinite, age > -9e9, age < 9e9 { return Duration.nanoseconds(Int64(age * 1e9)) < self }
        return age < timeInterval
    }
}
