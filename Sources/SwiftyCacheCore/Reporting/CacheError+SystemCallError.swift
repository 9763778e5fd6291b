extension CacheError {
    /// A failed system call, the ``CacheError/cause`` of an I/O failure: its name and `errno`.
    ///
    /// ```swift
    /// if let call = error.cause as? CacheError.SystemCallError, call.errno == ENOSPC { … }
    /// ```
    public struct SystemCallError: Error, Sendable, Hashable, CustomStringConvertible {
        /// The system call that failed, such as `"rename"`.
        public var call: String
        /// The `errno` value it set.
        public var errno: Int32

        public init(call: String, errno: Int32) {
            self.call = call
            self.errno = errno
        }

        init(_ failure: SystemCallFailure) {
            self.init(call: failure.call, errno: failure.errno)
        }

        /// The platform's text for `errno`, such as "No space left on device".
        public var errnoText: String { SystemCallFailure(call: call, errno: errno).errnoText }

        public var description: String { "\(call): \(errnoText) (errno \(errno))" }
    }
}

/// The earlier name of ``CacheError/SystemCallError``.
@available(*, deprecated, renamed: "CacheError.SystemCallError")
public typealias SystemCallError = CacheError.SystemCallError
