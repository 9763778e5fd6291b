import SwiftyCacheCore

#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif

/// A root directory that holds several caches, each in a subdirectory (a namespace) with its
/// own limits: objects, images, voice clips…
///
/// ```swift
/// let store = try CacheStore(name: "MyApp")            // ~/.cache/MyApp on Linux
/// let pages = try store.objects("pages", of: Page.self, keyType: URL.self)
/// let images = try store.data("images", maxDiskSize: 200 << 20)
/// print(store.totalSize())
/// ```
///
/// Asking twice for the same namespace returns the same cache (a directory can only be open
/// once). Asking for it with other types throws.
public final class CacheStore: Sendable {
    /// The root directory.
    public let directory: URL
    private let opened = LockedState<[String: any Sendable]>([:])

    /// Whether the namespaces open read-only (see `DiskLRUCache.Options.isReadOnly`): their
    /// caches read while another process writes them, or from a directory nobody can write, and
    /// every write throws.
    public let isReadOnly: Bool

    /// A store rooted at `directory`.
    ///
    /// - Parameters:
    ///   - directory: The root directory.
    ///   - readOnly: Whether every namespace opens read-only. The default is `false`.
    public init(directory: URL, readOnly: Bool = false) {
        self.directory = directory
        self.isReadOnly = readOnly
    }

    /// A store rooted at the platform's caches directory: `$XDG_CACHE_HOME/name` or
    /// `~/.cache/name` on Linux, the user's Caches folder on Apple platforms.
    ///
    /// - Throws: ``ObjectCacheError/Code/invalidConfiguration`` for a name that is not a
    ///   plain folder name.
    public convenience init(name: String, readOnly: Bool = false) throws {
        try Self.validate(name, operation: .openStore)
        self.init(directory: Self.defaultRoot().appending(path: name, directoryHint: .isDirectory), readOnly: readOnly)
    }

    /// The platform's directory for caches.
    public static func defaultRoot() -> URL {
        #if os(Linux) || os(Android) || os(FreeBSD) || os(OpenBSD)
        let environment = ProcessInfo.processInfo.environment
        if let xdg = environment["XDG_CACHE_HOME"], xdg.hasPrefix("/") {
            return URL(filePath: xdg, directoryHint: .isDirectory)
        }
        let home = environment["HOME"].flatMap { $0.isEmpty ? nil : $0 } ?? homeDirectoryPath()
        return URL(filePath: home, directoryHint: .isDirectory).appending(path: ".cache", directoryHint: .isDirectory)
        #else
        return FileManager.default.urls(for: .cachesDirectory, in: .userDomainMask).first
            ?? FileManager.default.temporaryDirectory
        #endif
    }

    /// The object cache of namespace `name`, opened on first use.
    ///
    /// ```swift
    /// let pages = try store.objects("pages", of: Page.self, keyType: URL.self, configuration: .init(memoryLimit: 200))
    /// ```
    ///
    /// - Parameters:
    ///   - name: A folder name: letters, digits, `-`, `_` and `.`, not starting with `.`.
    ///   - valueType: The value type.
    ///   - keyType: The key type. The default is `String`.
    ///   - configuration: The cache's settings (see ``ObjectCacheConfiguration``); a read-only
    ///     store opens it read-only whatever it says. Used when the namespace is first opened.
    ///   - migrations: How to read values earlier schema versions wrote (see
    ///     ``SchemaMigration``). Used when the namespace is first opened.
    /// - Throws: ``ObjectCacheError/Code/namespaceConflict`` if the namespace is open with other
    ///   types, and the errors of ``ObjectCache/init(directory:configuration:migrations:eventHandler:)``.
    public func objects<Key: Hashable & Codable & Sendable, Value: Codable & Sendable>(
        _ name: String, of valueType: Value.Type, keyType: Key.Type = String.self,
        configuration: ObjectCacheConfiguration = ObjectCacheConfiguration(),
        migrations: [SchemaMigration<Value>] = []
    ) throws -> ObjectCache<Key, Value> {
        try Self.validate(name, operation: .objects)
        var configuration = configuration
        configuration.isReadOnly = configuration.isReadOnly || isReadOnly
        return try opened.withLock { opened in
            if let existing = opened[name] {
                guard let cache = existing as? ObjectCache<Key, Value> else {
                    throw ObjectCacheError.namespaceConflict(name, openAs: type(of: existing))
                }
                return cache
            }
            let cache = try ObjectCache<Key, Value>(
                directory: directory.appending(path: name, directoryHint: .isDirectory), configuration: configuration,
                migrations: migrations)
            opened[name] = cache
            return cache
        }
    }

    /// A cache of raw bytes by string key in namespace `name` (images, audio…).
    ///
    /// - Parameters:
    ///   - name: A folder name, as for ``objects(_:of:keyType:configuration:migrations:)``.
    ///   - maxDiskSize: The bytes kept on disk. The default is 50 MiB.
    ///   - memoryLimit: Values kept in memory. The default is 20.
    /// - Throws: The errors of ``objects(_:of:keyType:configuration:migrations:)``.
    public func data(_ name: String, maxDiskSize: Int = 50 << 20, memoryLimit: Int = 20) throws -> ObjectCache<
        String, Data
    > {
        try objects(
            name, of: Data.self, keyType: String.self,
            configuration: ObjectCacheConfiguration(maxDiskSize: maxDiskSize, memoryLimit: memoryLimit))
    }

    /// The names of the namespaces on disk.
    public func namespaces() -> [String] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: directory.path(percentEncoded: false))) ?? []
        return names.filter { (try? Self.validate($0, operation: .namespaces)) != nil }.sorted()
    }

    /// The value bytes of all namespaces: the open caches' sizes, and the value files of the others.
    public func totalSize() -> Int {
        let open = opened.withLock { $0 }
        var total = 0
        for name in namespaces() {
            if let cache = open[name] as? any SizedCache {
                total += cache.diskSize
            } else {
                total += DiskLRUCache.storedValueBytes(in: directory.appending(path: name, directoryHint: .isDirectory))
            }
        }
        return total
    }

    /// Empties every namespace: open caches are cleared, the folders of the others deleted.
    ///
    /// - Throws: ``ObjectCacheError``: the first failure, after trying every namespace.
    public func clearAll() throws {
        guard !isReadOnly else {
            throw ObjectCacheError.readOnly(operation: .clearAll)
        }
        let open = opened.withLock { $0 }
        var failure: (any Error)?
        for name in namespaces() {
            do {
                if let cache = open[name] as? any SizedCache {
                    try cache.removeAll()
                } else {
                    let namespace = directory.appending(path: name, directoryHint: .isDirectory)
                    try DiskLRUCache.removeDirectory(at: namespace)
                    KeyNaming.removeRecord(in: namespace)
                }
            } catch {
                failure = failure ?? ObjectCacheError.wrapping(error, key: nil, operation: .clearAll)
            }
        }
        if let failure { throw failure }
    }

    private static func validate(_ name: String, operation: ObjectCacheError.Operation) throws {
        let allowed = name.utf8.allSatisfy { byte in
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
                UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "_"), UInt8(ascii: "."):
                true
            default: false
            }
        }
        guard !name.isEmpty, name.utf8.count <= 255, allowed, !name.hasPrefix(".") else {
            throw ObjectCacheError.invalidConfiguration(
                "a namespace must be a plain folder name (letters, digits, - _ .), got \(String(reflecting: name))",
                operation: operation)
        }
    }
}

/// What the store needs of a cache whatever its types.
protocol SizedCache: Sendable {
    var diskSize: Int { get }
    func removeAll() throws
}

extension ObjectCache: SizedCache {}

private func homeDirectoryPath() -> String {
    FileManager.default.homeDirectoryForCurrentUser.path(percentEncoded: false)
}
