public import SwiftyCacheCore

#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif

// The spellings of the release before 1.0, kept for one release so that code written against it
// still builds, with a warning that names the new spelling. The CHANGELOG lists each.

extension ObjectCache {
    /// Opens (or creates) an object cache in `directory`, with its settings as parameters.
    ///
    /// A `diskOptions` storage left unset opens packed storage, converting a directory an
    /// earlier release wrote in file storage, as ``ObjectCacheConfiguration/storage``'s default does.
    @available(*, deprecated, message: "pass an ObjectCacheConfiguration: init(directory:configuration:eventHandler:)")
    public convenience init(
        directory: URL,
        maxDiskSize: Int = 50 << 20,
        memoryLimit: Int = 100,
        memoryByteLimit: Int? = nil,
        format: ObjectCacheFormat = .json,
        schemaVersion: Int = 1,
        defaultTimeToLive: Duration? = nil,
        clock: @escaping @Sendable () -> Date = SystemClock.now,
        keyHasher: (any CacheKeyHasher)? = nil,
        diskOptions: DiskLRUCache.Options = DiskLRUCache.Options(),
        eventHandler: (@Sendable (ObjectCacheEvent<Key>) -> Void)? = nil
    ) throws {
        let configuration = ObjectCacheConfiguration(
            maxDiskSize: maxDiskSize, memoryLimit: memoryLimit, memoryByteLimit: memoryByteLimit, format: format,
            schemaVersion: schemaVersion, defaultTimeToLive: defaultTimeToLive,
            storage: diskOptions.chosenStorage ?? .packed, syncsWrites: diskOptions.syncsWrites,
            isReadOnly: diskOptions.isReadOnly, keyHasher: keyHasher, clock: clock)
        var options = diskOptions
        options.storage = configuration.storage
        options.migratesFileStorage = configuration.diskOptions.migratesFileStorage
        try self.init(
            directory: directory, configuration: configuration, diskOptions: options, eventHandler: eventHandler,
            fileSystem: SystemFileSystem())
    }

    /// Reads the value for `key` (errors read as `nil`), or stores a value in memory only,
    /// unsaved; `nil` removes the key from memory and disk.
    @available(
        *, deprecated,
        message:
            "read with value(forKey:), which throws; write with setUnsaved(_:forKey:), set(_:forKey:) or removeValue(forKey:)"
    )
    public subscript(key: Key) -> Value? {
        get { try? value(forKey: key) }
        set {
            if let newValue {
                setUnsaved(newValue, forKey: key)
            } else if !isReadOnly {
                _ = try? removeValue(forKey: key)
            }
        }
    }

    /// Removes `key` from memory and disk.
    @available(*, deprecated, renamed: "removeValue(forKey:)")
    @discardableResult
    public func removePermanently(forKey key: Key) throws -> Bool { try removeValue(forKey: key) }

    /// Removes `key` from memory and disk.
    @available(*, deprecated, renamed: "removeValue(forKey:)")
    @discardableResult
    public func removePermanently(forKey key: Key) async throws -> Bool { try await removeValue(forKey: key) }

    /// Whether the cache holds a value for `key` that has not expired.
    @available(*, deprecated, renamed: "containsValue(forKey:)")
    public func contains(_ key: Key) throws -> Bool { try containsValue(forKey: key) }

    /// Writes the unsaved value of `key`, if there is one, to disk.
    @available(*, deprecated, renamed: "save(forKey:)")
    public func save(_ key: Key) throws { try save(forKey: key) }

    /// Writes the unsaved value of `key`, if there is one, to disk.
    @available(*, deprecated, renamed: "save(forKey:)")
    public func save(_ key: Key) async throws { try await save(forKey: key) }
}

extension ObjectCacheError.Operation {
    /// The operation of `removeValue(forKey:)`, by its earlier name.
    @available(*, deprecated, renamed: "removeValue")
    public static let removePermanently = removeValue

    /// The operation of `containsValue(forKey:)`, by its earlier name.
    @available(*, deprecated, renamed: "containsValue")
    public static let contains = containsValue
}

extension ObjectCacheFormat {
    /// JSON configured through Foundation's coders: the built-in coders take their strategies,
    /// formatting and user info; a decoder set to read JSON5 or to assume a top-level
    /// dictionary keeps Foundation's coders.
    @available(
        *, deprecated,
        message: "use json(encoder:decoder:) with the built-in coders' options, or foundationJSON(configure:)"
    )
    public static func json(configure: ((JSONEncoder, JSONDecoder) -> Void)?) -> ObjectCacheFormat {
        let encoder = JSONEncoder()
        let decoder = JSONDecoder()
        configure?(encoder, decoder)
        if decoder.allowsJSON5 || decoder.assumesTopLevelDictionary {
            return foundationJSON(configure: configure)
        }
        return json(encoder: DirectJSONEncoder(matching: encoder), decoder: DirectJSONDecoder(matching: decoder))
    }
}

extension CacheStore {
    /// The object cache of namespace `name`, with its settings as parameters.
    @available(*, deprecated, message: "pass an ObjectCacheConfiguration: objects(_:of:keyType:configuration:)")
    public func objects<Key: Hashable & Codable & Sendable, Value: Codable & Sendable>(
        _ name: String, of valueType: Value.Type, keyType: Key.Type = String.self,
        maxDiskSize: Int = 50 << 20, memoryLimit: Int = 100, format: ObjectCacheFormat = .json,
        schemaVersion: Int = 1, defaultTimeToLive: Duration? = nil
    ) throws -> ObjectCache<Key, Value> {
        try objects(
            name, of: valueType, keyType: keyType,
            configuration: ObjectCacheConfiguration(
                maxDiskSize: maxDiskSize, memoryLimit: memoryLimit, format: format, schemaVersion: schemaVersion,
                defaultTimeToLive: defaultTimeToLive))
    }
}
