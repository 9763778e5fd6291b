#if canImport(Darwin)
import Darwin
#elseif canImport(Glibc)
@preconcurrency import Glibc
#elseif canImport(Musl)
@preconcurrency import Musl
#else
#error("Unsupported platform")
#endif

/// Permission bits for what the cache creates: private to the user.
package enum FileModes {
    package static let file: UInt32 = 0o600
    package static let directory: UInt32 = 0o700
}
