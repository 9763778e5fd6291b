#if canImport(Darwin)
import Darwin
#elseif canImport(Glibc)
@preconcurrency import Glibc
#elseif canImport(Musl)
@preconcurrency import Musl
#else
#error("Unsupported platform")
#endif

/// Limits the process runs under.
enum ProcessLimits {
    /// The soft limit on open descriptors (`RLIMIT_NOFILE`), read once per call; `nil` when it
    /// cannot be read or is unlimited. iOS starts apps at 256, Linux shells usually at 1,024.
    static func openFiles() -> Int? {
        var limit = rlimit()
        #if canImport(Darwin)
        let resource = RLIMIT_NOFILE
        let unlimited = RLIM_INFINITY
        #elseif canImport(Glibc)
        let resource = __rlimit_resource_t(RLIMIT_NOFILE.rawValue)
        let unlimited = rlim_t.max  // RLIM_INFINITY, ((rlim_t) -1), which Swift does not import
        #else
        let resource = RLIMIT_NOFILE
        let unlimited = rlim_t.max
        #endif
        guard getrlimit(resource, &limit) == 0, limit.rlim_cur != unlimited else { return nil }
        return Int(clamping: limit.rlim_cur)
    }
}
