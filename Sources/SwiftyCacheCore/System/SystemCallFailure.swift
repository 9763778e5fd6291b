#if canImport(Darwin)
import Darwin
#elseif canImport(Glibc)
@preconcurrency import Glibc
#elseif canImport(Musl)
@preconcurrency import Musl
#endif

/// A failed system call, as the `System/` layer reports it: its name and `errno`. A
/// ``CacheError`` carries it to users as its ``CacheError/SystemCallError`` cause.
package struct SystemCallFailure: Error, Sendable, Hashable, CustomStringConvertible {
    /// The system call that failed, such as `"rename"`.
    package var call: String
    /// The `errno` value it set.
    package var errno: Int32

    package init(call: String, errno: Int32) {
        self.call = call
        self.errno = errno
    }

    /// The platform's text for `errno`, such as "No space left on device".
    package var errnoText: String {
        guard let text = strerror(errno) else { return "errno \(errno)" }
        return String(cString: text)
    }

    package var description: String { "\(call): \(errnoText) (errno \(errno))" }
}
