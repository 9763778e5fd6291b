#if canImport(Darwin)
import Darwin
#elseif canImport(Glibc)
@preconcurrency import Glibc
#elseif canImport(Musl)
@preconcurrency import Musl
#endif

/// A failed system call: its name and `errno`.
public struct SystemCallError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The system call that failed, such as `"rename"`.
    public var call: String
    /// The `errno` value it set.
    public var errno: Int32

    public init(call: String, errno: Int32) {
        self.call = call
        self.errno = errno
    }

    /// The platform's text for `errno`, such as "No space left on device".
    public var errnoText: String {
        guard let text = strerror(errno) else { return "errno \(errno)" }
        return String(cString: text)
    }

    public var description: String { "\(call): \(errnoText) (errno \(errno))" }
}
