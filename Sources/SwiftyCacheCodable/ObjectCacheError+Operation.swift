public import SwiftyCacheCore

extension ObjectCacheError {
    /// The operation of ``ObjectCache`` or ``CacheStore`` that failed: one of the named
    /// constants below, never free text. Extensible like ``Code``: `case .save:` in a `switch`.
    /// A string literal still compares with it, as when the property was a `String`, with a
    /// deprecation warning: name the constant.
    public struct Operation: Hashable, Sendable, CustomStringConvertible, ExpressibleByStringLiteral {
        /// The operation's name, such as `"save"`.
        public let name: String

        init(name: String) { self.name = name }

        /// An operation named by `value`; for comparing with the names earlier releases used.
        @available(*, deprecated, message: "compare with the named constants, such as .save")
        public init(stringLiteral value: String) { self.init(name: value) }

        public var description: String { name }

        public static let open = Operation(name: "open")
        public static let close = Operation(name: "close")
        public static let value = Operation(name: "value")
        public static let set = Operation(name: "set")
        public static let save = Operation(name: "save")
        public static let containsValue = Operation(name: "containsValue")
        public static let attachment = Operation(name: "attachment")
        public static let removeValue = Operation(name: "removeValue")
        public static let removeAll = Operation(name: "removeAll")
        public static let removeExpired = Operation(name: "removeExpired")
        public static let clearMemory = Operation(name: "clearMemory")
        public static let setMaxDiskSize = Operation(name: "setMaxDiskSize")
        public static let migrateAll = Operation(name: "migrateAll")
        public static let pin = Operation(name: "pin")
        public static let unpin = Operation(name: "unpin")
        /// Saving a value the memory tier evicted before it was saved.
        public static let evictFromMemory = Operation(name: "evict from memory")
        /// Opening a ``CacheStore``.
        public static let openStore = Operation(name: "CacheStore")
        /// Opening a namespace of a ``CacheStore``.
        public static let objects = Operation(name: "objects")
        /// Listing a store's namespaces.
        public static let namespaces = Operation(name: "namespaces")
        public static let clearAll = Operation(name: "clearAll")
        /// Moving a namespace to the other storage class.
        public static let moveNamespace = Operation(name: "moveNamespace")
    }

    /// Where the library built an error (see `CacheError.Location`).
    public typealias Location = CacheError.Location
}
