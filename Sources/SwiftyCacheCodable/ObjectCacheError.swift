import SwiftyCacheCore

/// The error ``ObjectCache`` and ``CacheStore`` throw.
public struct ObjectCacheError: Error, Sendable, CustomStringConvertible {
    /// What kind of failure this is; extensible like ``CacheError/Code``.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        private let name: String
        private init(_ name: String) { self.name = name }

        /// A value or key could not be encoded.
        public static let encodingFailed = Code("encoding failed")
        /// The disk engine failed; ``ObjectCacheError/cause`` holds its ``CacheError``.
        public static let diskFailure = Code("disk failure")
        /// A parameter is out of range, or a namespace name is not a plain folder name.
        public static let invalidConfiguration = Code("invalid configuration")
        /// A namespace is already open with another key or value type.
        public static let namespaceConflict = Code("namespace conflict")
        /// A ``CacheAttachments`` value returned the wrong number of parts.
        public static let attachmentCountMismatch = Code("attachment count mismatch")

        public var description: String { name }
    }

    public var code: Code
    public var message: String
    /// The key concerned, as text.
    public var key: String?
    /// The operation that failed, such as `"set"` or `"save"`.
    public var operation: String?
    /// The underlying error: an encoding error or a ``CacheError``.
    public var cause: (any Error)?

    public init(code: Code, message: String, key: String? = nil, operation: String? = nil, cause: (any Error)? = nil) {
        self.code = code
        self.message = message
        self.key = key
        self.operation = operation
        self.cause = cause
    }

    public var description: String {
        describeFailure(code: "\(code)", message: message, context: [("operation", operation), ("key", key)], cause: cause)
    }
}

/// Things an ``ObjectCache`` handled on its own and reports to its event handler.
public enum ObjectCacheEvent<Key: Sendable>: Sendable {
    /// A stored value no longer decodes (the type changed); it was removed and read as a miss.
    case decodingFailed(key: Key, error: any Error)
    /// An entry written in another format or envelope version was read as a miss and removed.
    case incompatibleEntry(key: Key)
    /// Another key's value sits under the same hash; it was read as a miss.
    case hashCollision(key: Key)
    /// An expired entry was removed.
    case expired(key: Key)
    /// Saving an unsaved value failed while it was being evicted from memory; it stays in memory.
    case saveFailed(key: Key, error: any Error)
}

/// Counters of an ``ObjectCache`` since it was opened.
public struct ObjectCacheStatistics: Sendable, Hashable {
    /// Reads answered from memory.
    public var memoryHits = 0
    /// Reads answered from disk.
    public var diskHits = 0
    /// Reads that found nothing (including expired, incompatible and undecodable entries).
    public var misses = 0
    /// Stored values that failed to decode.
    public var decodeFailures = 0
    /// Values dropped from memory to stay under its limits (saved first when unsaved).
    public var memoryEvictions = 0
    /// Values written to disk, by `set` or `save`.
    public var saves = 0
    /// Entries found expired and removed.
    public var expirations = 0

    public init() {}
}
