/// The one error type the cache engine throws.
///
/// Match on ``code`` to handle a kind of failure; read ``description`` (or ``message``,
/// ``key``, ``path``, ``operation`` and ``cause``) to report it:
///
/// ```swift
/// do { try cache.setData([a, b], forKey: "k") }
/// catch let error as CacheError where error.code == .editInProgress { retryLater() }
/// ```
public struct CacheError: Error, Sendable, CustomStringConvertible {
    /// What kind of failure this is. A struct over a private enum, so new codes can be added
    /// without breaking `switch` statements in client code.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        private enum Value: String, Sendable {
            case invalidKey = "invalid key"
            case wrongValueCount = "wrong value count"
            case slotOutOfRange = "slot out of range"
            case cacheClosed = "cache closed"
            case editInProgress = "edit in progress"
            case directoryLocked = "directory locked"
            case invalidConfiguration = "invalid configuration"
            case ioFailure = "I/O failure"
            case journalUnavailable = "journal unavailable"
            case entryNotFound = "entry not found"
            case incompleteEntry = "incomplete entry"
            case editorFinished = "editor finished"
            case editorDetached = "editor detached"
            case corruptValue = "corrupt value"
            case snapshotClosed = "snapshot closed"
            case editorBusy = "editor busy"
            case notACacheDirectory = "not a cache directory"
            case foreignFile = "foreign file"
            case readOnly = "read-only"
            case storageMismatch = "storage mismatch"
            case pinLimitExceeded = "pin limit exceeded"
        }

        private let value: Value
        private init(_ value: Value) { self.value = value }

        /// A key that does not match `[a-z0-9_-]{1,120}`.
        public static let invalidKey = Code(.invalidKey)
        /// A call passed more or fewer values than the cache's `valueCount`.
        public static let wrongValueCount = Code(.wrongValueCount)
        /// A slot index outside `0..<valueCount`.
        public static let slotOutOfRange = Code(.slotOutOfRange)
        /// The cache was closed or deleted.
        public static let cacheClosed = Code(.cacheClosed)
        /// Another editor holds the key.
        public static let editInProgress = Code(.editInProgress)
        /// Another `DiskLRUCache`, in this process or another, has the directory open.
        public static let directoryLocked = Code(.directoryLocked)
        /// A parameter such as `valueCount` or `maxSize` is out of range, or the directory path
        /// names something that is not a directory.
        public static let invalidConfiguration = Code(.invalidConfiguration)
        /// A system call failed; ``CacheError/cause`` holds the ``CacheError/SystemCallError``.
        public static let ioFailure = Code(.ioFailure)
        /// An earlier journal write failed and the journal could not be rebuilt yet, so the
        /// cache refuses edits; reads still work.
        public static let journalUnavailable = Code(.journalUnavailable)
        /// A partial write named a key that has no entry.
        public static let entryNotFound = Code(.entryNotFound)
        /// A new entry was committed without a value in every slot.
        public static let incompleteEntry = Code(.incompleteEntry)
        /// The editor was already committed or aborted.
        public static let editorFinished = Code(.editorFinished)
        /// The entry was removed, or the cache closed, while the editor was open.
        public static let editorDetached = Code(.editorDetached)
        /// A value file does not hold the bytes the journal recorded.
        public static let corruptValue = Code(.corruptValue)
        /// The snapshot was closed before this read.
        public static let snapshotClosed = Code(.snapshotClosed)
        /// The editor was called from inside its own ``Editor/write(at:_:)`` closure, or from
        /// another thread while that closure runs.
        public static let editorBusy = Code(.editorBusy)
        /// The directory holds a `journal` that is not a DiskLruCache journal: it belongs to
        /// something else, and the cache touched nothing.
        public static let notACacheDirectory = Code(.notACacheDirectory)
        /// A file the cache did not create has the name a value of this key would take; the
        /// cache refuses to replace it.
        public static let foreignFile = Code(.foreignFile)
        /// The cache was opened with ``DiskLRUCache/Options/isReadOnly``.
        public static let readOnly = Code(.readOnly)
        /// The directory was written in the other storage (``DiskLRUCache/Storage``): files
        /// opened as packed, or packed opened as files. Nothing was touched.
        public static let storageMismatch = Code(.storageMismatch)
        /// Pinning the entry would take the pinned entries' bytes past
        /// ``DiskLRUCache/Options/maxPinnedSize``; nothing was pinned.
        public static let pinLimitExceeded = Code(.pinLimitExceeded)

        /// The code's name, such as `"I/O failure"`.
        public var description: String { value.rawValue }
    }

    /// What kind of failure this is.
    public var code: Code
    /// A sentence describing the failure and, where there is one, the remedy.
    public var message: String
    /// The cache key concerned, if any.
    public var key: String?
    /// The file concerned, if any.
    public var path: String?
    /// The cache operation that failed, such as ``Operation/commit`` or ``Operation/open``.
    public var operation: Operation?
    /// The underlying error, typically a ``CacheError/SystemCallError``.
    public var cause: (any Error)?
    /// Where the library built the error; `nil` for one built by client code.
    public var location: Location?
    /// Whether a storage found the cache's directory deleted (``directoryVanished(_:operation:path:key:file:line:)``):
    /// the one outcome the state handles by recreating it.
    var isDirectoryVanished = false

    /// Creates an error. The engine builds its errors through named factories
    /// (`CacheError+Factories.swift`); this initializer is for code that wraps or tests them.
    public init(
        code: Code, message: String, key: String? = nil, path: String? = nil,
        operation: Operation? = nil, cause: (any Error)? = nil, location: Location? = nil
    ) {
        self.code = code
        self.message = message
        self.key = key
        self.path = path
        self.operation = operation
        // The System layer's failure reaches users as the public type.
        self.cause = (cause as? SystemCallFailure).map(SystemCallError.init) ?? cause
        self.location = location
    }

    /// An error built by a factory at `file`:`line` (`CacheError+Factories.swift`).
    init(
        at file: String, _ line: Int, code: Code, message: String, key: String? = nil, path: String? = nil,
        operation: Operation? = nil, cause: (any Error)? = nil
    ) {
        self.init(
            code: code, message: message, key: key, path: path, operation: operation, cause: cause,
            location: Location(file: file, line: line))
    }

    /// `code: message (operation: …, key: …, path: …): cause`.
    public var description: String {
        describeFailure(
            code: "\(code)", message: message,
            context: [("operation", operation?.name), ("key", key), ("path", path)], cause: cause)
    }
}

extension CacheError: CustomDebugStringConvertible {
    /// ``description``, then where the library built the error.
    public var debugDescription: String {
        location.map { "\(description) [at \($0)]" } ?? description
    }
}

/// `code: message (name: value, …): cause`, the one shape of every error text in the package.
package func describeFailure(code: String, message: String, context: [(String, String?)], cause: (any Error)?) -> String
{
    var text = "\(code): \(message)"
    let parts = context.compactMap { name, value in value.map { "\(name): \($0)" } }
    if !parts.isEmpty { text += " (" + parts.joined(separator: ", ") + ")" }
    if let cause { text += ": \(cause)" }
    return text
}
