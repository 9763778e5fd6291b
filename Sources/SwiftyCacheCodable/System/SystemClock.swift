#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// The wall clock a configuration uses unless a test injects one: the time entries are dated
/// with and aged against.
///
/// Ages are compared with durations of seconds and more, so the clock does not need the
/// nanoseconds of `Date()`. On Linux it reads `CLOCK_REALTIME_COARSE`, the time the kernel
/// keeps at its last tick (a resolution of 1–4 ms), which the vDSO returns without reading
/// the hardware counter: 6 ns here against 41 ns for `Date()`, a tenth of a memory hit
/// (docs/PERFORMANCE.md). Every date the default configuration writes comes from this one
/// clock, so a value read back is never younger than it was written. Elsewhere, and when the
/// coarse clock is unavailable, it is `Date()`.
@usableFromInline
enum SystemClock {
    /// The current time, at the resolution described above.
    @usableFromInline
    @Sendable
    static func now() -> Date {
        #if canImport(Glibc) || canImport(Musl)
        var time = timespec()
        guard clock_gettime(CLOCK_REALTIME_COARSE, &time) == 0 else { return Date() }
        // Seconds since 1970 to seconds since 2001 (`Date`'s reference), as Foundation does.
        let seconds = Double(time.tv_sec) - Date.timeIntervalBetween1970AndReferenceDate
        return Date(timeIntervalSinceReferenceDate: seconds + Double(time.tv_nsec) / 1_000_000_000)
        #else
        return Date()
        #endif
    }
}
