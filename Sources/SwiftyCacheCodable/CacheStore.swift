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
/// Each namespace has a ``CacheStorageClass``: the store's, or the one its configuration
/// names. A store made by ``init(name:storageClass:readOnly:)`` keeps purgeable namespaces in
/// the platform's caches directory and durable ones in its directory for app data; a store
/// made by ``init(directory:storageClass:readOnly:)`` keeps both in its one directory. A
/// namespace is never opened with the other class than it was created with (see
/// <doc:ChoosingStorage>).
///
/// Asking twice for the same namespace returns the same cache (a directory can only be open
/// once). Asking for it with other types throws.
public final class CacheStore: Sendable {
    /// The root directory of the store's own storage class.
    public let directory: URL
    /// The class of namespaces whose configuration names none.
    public let storageClass: CacheStorageClass
    /// The root of each class.
    private let roots: [CacheStorageClass: URL]
    private let opened = LockedState<[String: any Sendable]>([:])

    /// Whether the namespaces open read-only (see `DiskLRUCache.Options.isReadOnly`): their
    /// caches read while another process writes them, or from a directory nobody can write, and
    /// every write throws.
    public let isReadOnly: Bool

    /// A store rooted at `directory`, for namespaces of every class.
    ///
    /// - Parameters:
    ///   - directory: The root directory.
    ///   - storageClass: The class of namespaces whose configuration names none; recorded in
    ///     each namespace when it is created. The default is ``CacheStorageClass/purgeable``.
    ///   - readOnly: Whether every namespace opens read-only. The default is `false`.
    public init(directory: URL, storageClass: CacheStorageClass = .purgeable, readOnly: Bool = false) {
        self.directory = directory
        self.storageClass = storageClass
        self.roots = [.purgeable: directory, .durable: directory]
        self.isReadOnly = readOnly
    }

    /// A store named `name` under the platform's directories: purgeable namespaces in
    /// `$XDG_CACHE_HOME/name` or `~/.cache/name` on Linux (the user's Caches folder on Apple
    /// platforms), durable ones in `$XDG_DATA_HOME/name` or `~/.local/share/name` (Application
    /// Support).
    ///
    /// - Parameters:
    ///   - name: A plain folder name.
    ///   - storageClass: The class of namespaces whose configuration names none. The default
    ///     is ``CacheStorageClass/purgeable``.
    ///   - readOnly: Whether every namespace opens read-only. The default is `false`.
    /// - Throws: ``ObjectCacheError/Code/invalidConfiguration`` for a name that is not a
    ///   plain folder name.
    public convenience init(name: String, storageClass: CacheStorageClass = .purgeable, readOnly: Bool = false)
        throws
    {
        try self.init(name: name, storageClass: storageClass, readOnly: readOnly, roots: Self.defaultRoot(for:))
    }

    /// A store named `name` under the roots `root` gives for each class (the tests' own).
    package init(
        name: String, storageClass: CacheStorageClass, readOnly: Bool, roots root: (CacheStorageClass) -> URL
    ) throws {
        try Self.validate(name, operation: .openStore)
        var roots: [CacheStorageClass: URL] = [:]
        for storageClass in CacheStorageClass.allCases {
            roots[storageClass] = root(storageClass).appending(path: name, directoryHint: .isDirectory)
        }
        self.directory = roots[storageClass] ?? root(storageClass)
        self.storageClass = storageClass
        self.roots = roots
        self.isReadOnly = readOnly
    }

    /// The platform's directory for caches (the purgeable class's root).
    public static func defaultRoot() -> URL {
        defaultRoot(for: .purgeable)
    }

    /// The platform's directory for `storageClass`: for caches (`$XDG_CACHE_HOME`, `~/.cache`,
    /// Caches) or for an app's data (`$XDG_DATA_HOME`, `~/.local/share`, Application Support).
    public static func defaultRoot(for storageClass: CacheStorageClass) -> URL {
        StorageRoots.root(for: storageClass)
    }

    /// The root directory of the namespaces of `storageClass`.
    public func directory(for storageClass: CacheStorageClass) -> URL {
        roots[storageClass] ?? directory
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
        let storageClass = configuration.storageClass ?? self.storageClass
        configuration.storageClass = storageClass
        return try opened.withLock { opened in
            if let existing = opened[name] {
                guard let cache = existing as? ObjectCache<Key, Value> else {
                    throw ObjectCacheError.namespaceConflict(name, openAs: type(of: existing))
                }
                return cache
            }
            for other in CacheStorageClass.allCases where directory(for: other) != directory(for: storageClass) {
                let elsewhere = directory(for: other).appending(path: name, directoryHint: .isDirectory)
                if Self.holdsFiles(elsewhere) {
                    throw ObjectCacheError.storageClassConflict(
                        elsewhere.path(percentEncoded: false), recorded: other, requested: storageClass)
                }
            }
            let cache = try ObjectCache<Key, Value>(
                directory: directory(for: storageClass).appending(path: name, directoryHint: .isDirectory),
                configuration: configuration, migrations: migrations)
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

    /// The names of the namespaces on disk, of every class.
    public func namespaces() -> [String] {
        Set(locations().map(\.name)).sorted()
    }

    /// The value bytes of all namespaces: the open caches' sizes, and the value files of the others.
    public func totalSize() -> Int {
        let open = opened.withLock { $0 }
        var total = 0
        for (name, namespace) in locations() {
            if let cache = open[name] as? any SizedCache {
                total += cache.diskSize
            } else {
                total += DiskLRUCache.storedValueBytes(in: namespace)
            }
        }
        return total
    }

    /// Empties every namespace of every class: open caches are cleared, the folders of the
    /// others deleted.
    ///
    /// - Throws: ``ObjectCacheError``: the first failure, after trying every namespace.
    public func clearAll() throws {
        guard !isReadOnly else {
            throw ObjectCacheError.readOnly(operation: .clearAll)
        }
        let open = opened.withLock { $0 }
        var failure: (any Error)?
        var cleared = Set<String>()
        for (name, namespace) in locations() {
            do {
                if let cache = open[name] as? any SizedCache {
                    if cleared.insert(name).inserted { try cache.removeAll() }
                } else {
                    try DiskLRUCache.removeDirectory(at: namespace)
                    KeyNaming.removeRecord(in: namespace)
                }
            } catch {
                failure = failure ?? ObjectCacheError.wrapping(error, key: nil, operation: .clearAll)
            }
        }
        if let failure { throw failure }
    }

    /// Moves namespace `name` to `storageClass`: its folder to that class's root (one
    /// `rename(2)` under the cache's lock, so a crash leaves it whole at one place or the
    /// other), then its record of the class. Run it again after a crash to finish. A namespace
    /// already of that class, or one that does not exist, is left as it is.
    ///
    /// ```swift
    /// // Drafts used to be a cache; from this release on they are the user's data.
    /// try store.moveNamespace("drafts", to: .durable)
    /// let drafts = try store.objects("drafts", of: Draft.self, configuration: .init(storageClass: .durable))
    /// ```
    ///
    /// Move a namespace before this store opens it (at launch, say): one it opened stays open
    /// until the store goes.
    ///
    /// - Throws: ``ObjectCacheError``: ``ObjectCacheError/Code/readOnly`` for a read-only store;
    ///   ``ObjectCacheError/Code/invalidConfiguration`` for a name that is not a plain folder
    ///   name or a namespace this store opened; ``ObjectCacheError/Code/storageClassConflict``
    ///   when both roots hold a namespace of that name; ``ObjectCacheError/Code/diskFailure``
    ///   when another cache has it open (the engine's `directoryLocked`) or the roots are on
    ///   different volumes (`EXDEV`: nothing moved).
    public func moveNamespace(_ name: String, to storageClass: CacheStorageClass) throws {
        try Self.validate(name, operation: .moveNamespace)
        guard !isReadOnly else { throw ObjectCacheError.readOnly(operation: .moveNamespace) }
        try opened.withLock { opened in
            guard opened[name] == nil else {
                throw ObjectCacheError.invalidConfiguration(
                    "namespace \(name) is open in this store; move it before opening it", operation: .moveNamespace)
            }
            let target = directory(for: storageClass).appending(path: name, directoryHint: .isDirectory)
            for other in CacheStorageClass.allCases where directory(for: other) != directory(for: storageClass) {
                let source = directory(for: other).appending(path: name, directoryHint: .isDirectory)
                guard Self.holdsFiles(source) else { continue }
                guard !Self.holdsFiles(target) else {
                    throw ObjectCacheError.storageClassConflict(
                        target.path(percentEncoded: false), recorded: storageClass, requested: other)
                }
                do {
                    try FileManager.default.createDirectory(
                        at: directory(for: storageClass), withIntermediateDirectories: true,
                        attributes: [.posixPermissions: 0o700])
                    try DiskLRUCache.moveDirectory(at: source, to: target)
                } catch {
                    throw ObjectCacheError.wrapping(error, key: nil, operation: .moveNamespace)
                }
            }
            guard Self.holdsFiles(target) else { return }
            try StorageClassRecord.write(storageClass, in: target, fileSystem: SystemFileSystem())
        }
    }

    /// Every namespace folder under the roots, with its name.
    ///
    /// - Complexity: O(entries in the roots).
    private func locations() -> [(name: String, directory: URL)] {
        var seen = Set<URL>()
        var result: [(name: String, directory: URL)] = []
        for storageClass in CacheStorageClass.allCases {
            let root = directory(for: storageClass)
            guard seen.insert(root).inserted else { continue }
            let names = (try? FileManager.default.contentsOfDirectory(atPath: root.path(percentEncoded: false))) ?? []
            for name in names.sorted() where (try? Self.validate(name, operation: .namespaces)) != nil {
                result.append((name, root.appending(path: name, directoryHint: .isDirectory)))
            }
        }
        return result
    }

    /// Whether `directory` holds a cache (its journal, or a record of the object cache's): a
    /// namespace of the other class.
    ///
    /// - Complexity: O(1): two lookups, no listing.
    private static func holdsFiles(_ directory: URL) -> Bool {
        [Self.journalName, StorageClassRecord.record.fileName].contains { name in
            FileManager.default.fileExists(atPath: directory.appending(path: name).path(percentEncoded: false))
        }
    }

    /// The engine's journal, in every cache directory.
    private static let journalName = "journal"

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
