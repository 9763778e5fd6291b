extension CacheError {
    /// The cache operation that failed: one of the named constants below, never free text.
    ///
    /// A struct rather than an enum, as ``Code`` is, so that operations can be added without
    /// breaking a `switch` in client code. It reads as its name (`"\(operation)"` is `"commit"`),
    /// and a string literal still compares with it (`error.operation == "commit"`), as when the
    /// property was a `String`.
    public struct Operation: Hashable, Sendable, CustomStringConvertible, ExpressibleByStringLiteral {
        /// The operation's name, such as `"commit"`.
        public let name: String

        init(_ name: String) { self.name = name }

        /// An operation named by `value`; for comparing with the names earlier releases used.
        public init(stringLiteral value: String) { self.init(value) }

        public var description: String { name }

        // The public API's operations, named as the methods are.
        public static let open = Operation("open")
        public static let close = Operation("close")
        public static let delete = Operation("delete")
        public static let data = Operation("data")
        public static let snapshot = Operation("snapshot")
        public static let snapshots = Operation("snapshots")
        public static let contains = Operation("contains")
        public static let keys = Operation("keys")
        public static let edit = Operation("edit")
        public static let setData = Operation("setData")
        public static let setPartialData = Operation("setPartialData")
        public static let remove = Operation("remove")
        public static let evictAll = Operation("evictAll")
        public static let flush = Operation("flush")
        public static let setMaxSize = Operation("setMaxSize")
        public static let refresh = Operation("refresh")
        public static let compact = Operation("compact")

        // The steps inside them.
        /// Reading a value's bytes.
        public static let read = Operation("read")
        /// Writing a value's bytes while it is staged.
        public static let write = Operation("write")
        /// Publishing an edit.
        public static let commit = Operation("commit")
        /// Abandoning an edit.
        public static let abort = Operation("abort")
        /// Evicting least recently used entries.
        public static let evict = Operation("evict")
        /// The background pass: eviction and journal maintenance.
        public static let cleanup = Operation("cleanup")
        /// Rewriting the journal from the index.
        public static let rebuildJournal = Operation("rebuild journal")
        /// Dropping an entry whose values are missing or damaged.
        public static let dropDamagedEntry = Operation("drop damaged entry")
        /// Creating the cache directory.
        public static let createDirectory = Operation("create directory")
        /// Taking the directory's advisory lock.
        public static let lockDirectory = Operation("lock directory")
        /// Recreating a directory deleted underneath the cache.
        public static let restoreDirectory = Operation("restore directory")
        /// Ending a session when the last reference to the cache goes.
        public static let deinitialize = Operation("deinit")
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
