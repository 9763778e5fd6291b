public import SwiftyCacheCore

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
        /// A namespace was opened with the other ``CacheStorageClass`` than it was created
        /// with (see <doc:ChoosingStorage>).
        public static let storageClassConflict = Code("storage class conflict")
        /// The cache's files cannot be read now: their data-protection class keeps them
        /// closed while the device is locked. Nothing was removed; try again once the device
        /// is unlocked (see <doc:ChoosingStorage>).
        public static let unavailable = Code("unavailable")

        /// The code's name, such as `"disk failure"`.
        public var description: String { name }
    }

    /// What kind of failure this is.
    public var code: Code
    /// A sentence describing the failure.
    public var message: String
    /// The key concerned, as text.
    public var key: String?
    /// The operation that failed, such as ``Operation/set`` or ``Operation/save``.
    public var operation: Operation?
    /// The underlying error: an encoding error or a `CacheError`.
    public var cause: (any Error)?
    /// Where the library built the error; `nil` for one built by client code.
    public var location: Location?

    /// Creates an error. The library builds its errors through named factories; this
    /// initializer is for code that wraps or tests them.
    public init(
        code: Code, message: String, key: String? = nil, operation: Operation? = nil, cause: (any Error)? = nil,
        location: Location? = nil
    ) {
        self.code = code
        self.message = message
        self.key = key
        self.operation = operation
        self.cause = cause
        self.location = location
    }

    /// An error built by a factory at `file`:`line`.
    init(
        at file: String, _ line: Int, code: Code, message: String, key: String? = nil, operation: Operation? = nil,
        cause: (any Error)? = nil
    ) {
        self.init(
            code: code, message: message, key: key, operation: operation, cause: cause,
            location: Location(file: file, line: line))
    }

    /// `code: message (operation: …, key: …): cause`.
    public var description: String {
        describeFailure(
            code: "\(code)", message: message, context: [("operation", operation?.name), ("key", key)], cause: cause)
    }
}

extension ObjectCacheError: CustomDebugStringConvertible {
    /// ``description``, then where the library built the error.
    public var debugDescription: String {
        location.map { "\(description) [at \($0)]" } ?? description
    }
}

extension ObjectCacheError {
    /// The engine failed during `operation`; its error becomes the cause.
    static func diskFailure(
        _ error: CacheError, key: String?, operation: Operation, file: String = #fileID, line: Int = #line
    ) -> ObjectCacheError {
        ObjectCacheError(
            at: file, line, code: .diskFailure, message: error.message, key: key, operation: operation, cause: error)
    }

    /// Wraps any error that is not already an ``ObjectCacheError``: the engine's as
    /// ``Code/diskFailure``, anything else (a file-system error of the store) likewise, with
    /// its text.
    @usableFromInline
    static func wrapping(
        _ error: any Error, key: String?, operation: Operation, file: String = #fileID, line: Int = #line
    ) -> ObjectCacheError {
        if let error = error as? ObjectCacheError { return error }
        if let error = error as? CacheError {
            return diskFailure(error, key: key, operation: operation, file: file, line: line)
        }
        return ObjectCacheError(
            at: file, line, code: .diskFailure, message: "\(error)", key: key, operation: operation, cause: error)
    }

    /// A file of the object cache's own, beside the engine's (such as its key naming record),
    /// that could not be read or written.
    static func fileFailure(
        _ message: String, path: String, operation: Operation, cause: any Error, file: String = #fileID,
        line: Int = #line
    ) -> ObjectCacheError {
        ObjectCacheError(
            at: file, line, code: .diskFailure, message: "\(message) (\(path)): \(cause)", key: nil,
            operation: operation,
            cause: cause)
    }

    static func readOnly(operation: Operation, file: String = #fileID, line: Int = #line) -> ObjectCacheError {
        ObjectCacheError(
            at: file, line, code: .readOnly, message: "the store was opened read-only", operation: operation)
    }

    static func invalidConfiguration(
        _ message: String, key: String? = nil, operation: Operation, file: String = #fileID, line: Int = #line
    ) -> ObjectCacheError {
        ObjectCacheError(at: file, line, code: .invalidConfiguration, message: message, key: key, operation: operation)
    }

    /// A value or key (`what`) that its encoder rejected.
    @usableFromInline
    static func encodingFailed(
        _ what: String, key: String, operation: Operation, cause: any Error, file: String = #fileID, line: Int = #line
    ) -> ObjectCacheError {
        ObjectCacheError(
            at: file, line,
            code: .encodingFailed, message: "the \(what) could not be encoded", key: key, operation: operation,
            cause: cause)
    }

    static func namespaceConflict(_ name: String, openAs existing: Any.Type, file: String = #fileID, line: Int = #line)
        -> ObjectCacheError
    {
        ObjectCacheError(
            at: file, line,
            code: .namespaceConflict, message: "namespace \(name) is already open as \(existing)", operation: .objects)
    }

    static func storageClassConflict(
        _ path: String, recorded: CacheStorageClass, requested: CacheStorageClass, file: String = #fileID,
        line: Int = #line
    ) -> ObjectCacheError {
        ObjectCacheError(
            at: file, line, code: .storageClassConflict,
            message: "\(path) holds a \(recorded) cache; it cannot be opened as \(requested)", operation: .open)
    }

    /// A failure the platform's data protection caused (`EPERM` from a protected file while the
    /// device is locked), as ``Code/unavailable`` with the original error as its cause.
    @usableFromInline
    static func unavailable(_ error: ObjectCacheError, file: String = #fileID, line: Int = #line) -> ObjectCacheError {
        ObjectCacheError(
            at: file, line, code: .unavailable,
            message: "the cache's files are protected and cannot be read while the device is locked",
            key: error.key, operation: error.operation, cause: error.cause ?? error)
    }

    /// Whether this error is a protected file refused: a system call that failed with `EPERM`
    /// (what Apple platforms return for a file whose protection class keeps it closed).
    @usableFromInline
    var isPermissionDenied: Bool {
        if let failure = cause as? SystemCallFailure { return failure.errno == Errno.notPermitted }
        guard let engine = cause as? CacheError, let call = engine.cause as? CacheError.SystemCallError else {
            return false
        }
        return call.errno == Errno.notPermitted
    }

    @usableFromInline
    static func attachmentCountMismatch(
        expected: Int, got: Int, key: String, operation: Operation, file: String = #fileID, line: Int = #line
    ) -> ObjectCacheError {
        ObjectCacheError(
            at: file, line,
            code: .attachmentCountMismatch, message: "expected \(expected) attachments, the value returned \(got)",
            key: key, operation: operation)
    }
}
