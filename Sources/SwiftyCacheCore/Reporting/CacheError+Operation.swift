extension CacheError {
    /// The cache operation that failed: one of the named constants below, never free text.
    ///
    /// A struct rather than an enum, as ``Code`` is, so that operations can be added without
    /// breaking a `switch` in client code: `switch error.operation { case .setData: … }`. It
    /// reads as its name (`"\(operation)"` is `"commit"`). A string literal still compares with
    /// it, as when the property was a `String`, with a deprecation warning: name the constant.
    public struct Operation: Hashable, Sendable, CustomStringConvertible, ExpressibleByStringLiteral {
        /// The operation's name, such as `"commit"`.
        public let name: String

        init(name: String) { self.name = name }

        /// An operation named by `value`; for comparing with the names earlier releases used.
        @available(*, deprecated, message: "compare with the named constants, such as .setData")
        public init(stringLiteral value: String) { self.init(name: value) }

        public var description: String { name }

        // The public API's operations, named as the methods are.
        public static let open = Operation(name: "open")
        public static let close = Operation(name: "close")
        public static let delete = Operation(name: "delete")
        public static let data = Operation(name: "data")
        public static let snapshot = Operation(name: "snapshot")
        public static let snapshots = Operation(name: "snapshots")
        public static let contains = Operation(name: "contains")
        public static let keys = Operation(name: "keys")
        public static let edit = Operation(name: "edit")
        public static let setData = Operation(name: "setData")
        public static let setPartialData = Operation(name: "setPartialData")
        public static let remove = Operation(name: "remove")
        public static let evictAll = Operation(name: "evictAll")
        public static let flush = Operation(name: "flush")
        public static let setMaxSize = Operation(name: "setMaxSize")
        public static let refresh = Operation(name: "refresh")
        public static let compact = Operation(name: "compact")
        public static let pin = Operation(name: "pin")
        public static let unpin = Operation(name: "unpin")
        /// `DiskLRUCache.write(_:)`: a batch of sets and removals.
        public static let writeBatch = Operation(name: "writeBatch")

        // The calls of a snapshot and an editor.
        /// ``Snapshot/readData(at:)``, ``Snapshot/readString(at:encoding:)`` and an editor's
        /// read of the committed value.
        public static let read = Operation(name: "read")
        /// An editor's writes: ``Editor/setData(_:at:)``, ``Editor/write(at:_:)`` and the like.
        public static let write = Operation(name: "write")
        /// ``Editor/commit()``.
        public static let commit = Operation(name: "commit")
        /// ``Editor/abort()``.
        public static let abort = Operation(name: "abort")
    }

    /// Names the public call that failed: a method of ``DiskLRUCache``, ``Snapshot`` or
    /// ``Editor`` sets it on every error that leaves it, whichever step inside (a journal
    /// rebuild, an eviction, a directory restored) raised the error.
    func reported(by operation: Operation) -> CacheError {
        var error = self
        error.operation = operation
        return error
    }

    /// Runs `body`, the work of the public call `operation`: a ``CacheError`` it throws leaves
    /// named after the call, whichever step inside raised it.
    static func reporting<T>(_ operation: Operation, _ body: () throws -> T) throws -> T {
        do {
            return try body()
        } catch let error as CacheError {
            throw error.reported(by: operation)
        }
    }

    /// Where in the library an error was built, like NIO's `FileSystemError.SourceLocation`:
    /// for a bug report, not for handling.
    public struct Location: Hashable, Sendable, CustomStringConvertible {
        /// The file, as `#fileID` gives it (`SwiftyCacheCore/CacheState+Edit.swift`).
        public var file: String
        /// The line.
        public var line: Int

        /// Creates a location.
        public init(file: String, line: Int) {
            self.file = file
            self.line = line
        }

        /// `file:line`.
        public var description: String { "\(file):\(line)" }
    }
}

/// The steps inside the public calls. An error built in one of them leaves the library named
/// after the call (``CacheError/reported(by:)``); the step stays in the error's path and message.
extension CacheError.Operation {
    static let evicting = Self(name: "evict")
    static let cleaningUp = Self(name: "cleanup")
    static let rebuildingJournal = Self(name: "rebuild journal")
    static let droppingDamagedEntry = Self(name: "drop damaged entry")
    static let creatingDirectory = Self(name: "create directory")
    static let lockingDirectory = Self(name: "lock directory")
    static let restoringDirectory = Self(name: "restore directory")
    static let movingDirectory = Self(name: "move directory")
    static let endingSession = Self(name: "deinit")
}
