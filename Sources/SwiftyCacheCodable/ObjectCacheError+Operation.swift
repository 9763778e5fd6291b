public import SwiftyCacheCore

extension ObjectCacheError {
    /// The operation of ``ObjectCache`` or ``CacheStore`` that failed: one of the named
    /// constants below, never free text. Extensible like ``Code``; a string literal still
    /// compares with it (`error.operation == "save"`), as when the property was a `String`.
    public struct Operation: Hashable, Sendable, CustomStringConvertible, ExpressibleByStringLiteral {
        /// The operation's name, such as `"save"`.
        public let name: String

        init(_ name: String) { self.name = name }

        /// An operation named by `value`; for comparing with the names earlier releases used.
        public init(stringLiteral value: String) { self.init(value) }

        public var description: String { name }

        public static let open = Operation("open")
        public static let close = Operation("close")
        public static let value = Operation("value")
        public static let set = Operation("set")
        public static let save = Operation("save")
        public static let containsValue = Operation("containsValue")
        public static let attachment = Operation("attachment")
        public static let removeValue = Operation("removeValue")
        public static let removeAll = Operation("removeAll")
        public static let removeExpired = Operation("removeExpired")
        public static let clearMemory = Operation("clearMemory")
        public static let setMaxDiskSize = Operation("setMaxDiskSize")
        /// Saving a value the memory tier evicted before it was saved.
        public static let evictFromMemory = Operation("evict from memory")
        /// Opening a ``CacheStore``.
        public static let openStore = Operation("CacheStore")
        /// Opening a namespace of a ``CacheStore``.
        public static let objects = Operation("objects")
        /// Listing a store's namespaces.
        public static let namespaces = Operation("namespaces")
        public static let clearAll = Operation("clearAll")
    }

    /// Where the library built an error (see `CacheError.Location`).
    public typealias Location = CacheError.Location
}
