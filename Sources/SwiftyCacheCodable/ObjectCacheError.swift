import SwiftyCacheCore

/// The one error type ``ObjectCache`` and ``CacheStore`` throw. A failure of the disk engine
/// is wrapped with the code ``Code/diskFailure`` and the engine's `CacheError` as its
/// ``cause``.
public struct ObjectCacheError: Error, Sendable, CustomStringConvertible {
    /// What kind of failure this is; extensible like `CacheError.Code`.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        private let name: String
        private init(_ name: String) { self.name = name }

        /// A value or key could not be encoded.
        public static let encodingFailed = Code("encoding failed")
        /// The disk engine failed; ``ObjectCacheError/cause`` holds its `CacheError`.
        public static let diskFailure = Code("disk failure")
        /// A parameter is out of range, or a namespace name is not a plain folder name.
        public static let invalidConfiguration = Code("invalid configuration")
        /// A namespace is already open with another key or value type.
        public static let namespaceConflict = Code("namespace conflict")
        /// The store was opened read-only (a cache opened read-only reports the engine's
        /// `readOnly` error as the cause of a ``diskFailure``).
        public static let readOnly = Code("read-only")
        /// A ``CacheAttachments`` value returned the wrong number of parts.
        public static let attachmentCountMismatch = Code("attachment count mismatch")

        /// The code's name, such as `"disk failure"`.
        public var description: String { name }
    }

    /// What kind of failure this is.
    public var code: Code
    /// A sentence describing the failure.
    public var message: String
    /// The key concerned, as text.
    public var key: String?
    /// The operation that failed, such as `"set"` or `"save"`.
    public var operation: String?
    /// The underlying error: an encoding error or a `CacheError`.
    public var cause: (any Error)?

    /// Creates an error. The library builds its errors through named factories; this
    /// initializer is for code that wraps or tests them.
    public init(code: Code, message: String, key: String? = nil, operation: String? = nil, cause: (any Error)? = nil) {
        self.code = code
        self.message = message
        self.key = key
        self.operation = operation
        self.cause = cause
    }

    /// `code: message (operation: …, key: …): cause`.
    public var description: String {
        describeFailure(
            code: "\(code)", message: message, context: [("operation", operation), ("key", key)], cause: cause)
    }
}

extension ObjectCacheError {
    /// The engine failed during `operation`; its error becomes the cause.
    static func diskFailure(_ error: CacheError, key: String?, operation: String) -> ObjectCacheError {
        ObjectCacheError(code: .diskFailure, message: error.message, key: key, operation: operation, cause: error)
    }

    /// Wraps any error that is not already an ``ObjectCacheError``: the engine's as
    /// ``Code/diskFailure``, anything else (a file-system error of the store) likewise, with
    /// its text.
    static func wrapping(_ error: any Error, key: String?, operation: String) -> ObjectCacheError {
        if let error = error as? ObjectCacheError { return error }
        if let error = error as? CacheError { return diskFailure(error, key: key, operation: operation) }
        return ObjectCacheError(code: .diskFailure, message: "\(error)", key: key, operation: operation, cause: error)
    }

    static func readOnly(operation: String) -> ObjectCacheError {
        ObjectCacheError(code: .readOnly, message: "the store was opened read-only", operation: operation)
    }

    static func invalidConfiguration(_ message: String, key: String? = nil, operation: String) -> ObjectCacheError {
        ObjectCacheError(code: .invalidConfiguration, message: message, key: key, operation: operation)
    }

    /// A value or key (`what`) that its encoder rejected.
    static func encodingFailed(_ what: String, key: String, operation: String, cause: any Error) -> ObjectCacheError {
        ObjectCacheError(
            code: .encodingFailed, message: "the \(what) could not be encoded", key: key, operation: operation,
            cause: cause)
    }

    static func namespaceConflict(_ name: String, openAs existing: Any.Type) -> ObjectCacheError {
        ObjectCacheError(
            code: .namespaceConflict, message: "namespace \(name) is already open as \(existing)", operation: "objects")
    }

    static func attachmentCountMismatch(expected: Int, got: Int, key: String, operation: String) -> ObjectCacheError {
        ObjectCacheError(
            code: .attachmentCountMismatch, message: "expected \(expected) attachments, the value returned \(got)",
            key: key, operation: operation)
    }
}
