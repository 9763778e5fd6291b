#if canImport(Darwin)
import Darwin
#elseif canImport(Glibc)
@preconcurrency import Glibc
#elseif canImport(Musl)
@preconcurrency import Musl
#else
#error("Unsupported platform")
#endif

/// The kinds of directory entry the cache cares about.
package enum FileKind: Sendable {
    case regular, directory, symbolicLink, other
}
