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

        // The steps inside them.
        /// Reading a value's bytes.
        public static let read = Operation(name: "read")
        /// Writing a value's bytes while it is staged.
        public static let write = Operation(name: "write")
        /// Publishing an edit.
        public static let commit = Operation(name: "commit")
        /// Abandoning an edit.
        public static let abort = Operation(name: "abort")
        /// Evicting least recently used entries.
        public static let evict = Operation(name: "evict")
        /// The background pass: eviction and journal maintenance.
        public static let cleanup = Operation(name: "cleanup")
        /// Rewriting the journal from the index.
        public static let rebuildJournal = Operation(name: "rebuild journal")
        /// Dropping an entry whose values are missing or damaged.
        public static let dropDamagedEntry = Operation(name: "drop damaged entry")
        /// Creating the cache directory.
        public static let createDirectory = Operation(name: "create directory")
        /// Taking the directory's advisory lock.
        public static let lockDirectory = Operation(name: "lock directory")
        /// Recreating a directory deleted underneath the cache.
        public static let restoreDirectory = Operation(name: "restore directory")
        /// Ending a session when the last reference to the cache goes.
        public static let deinitialize = Operation(name: "deinit")
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
