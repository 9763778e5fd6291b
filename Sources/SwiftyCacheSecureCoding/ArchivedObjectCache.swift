public import Foundation
public import SwiftyCacheCodable

/// A cache of `NSSecureCoding` objects: model classes of the Objective-C era, kept as keyed
/// archives in an `ObjectCache` of `Data`.
///
/// ```swift
/// let notes = try ArchivedObjectCache<String, LegacyNote>(
///     directory: dir, allowedClasses: [LegacyAttachment.self])
/// try notes.set(note, forKey: "n1")
/// let cached = try notes.value(forKey: "n1")   // unarchived with secure coding
/// ```
///
/// Values are archived with `NSKeyedArchiver`, every class secure-coding, and unarchived with
/// an explicit allow-list: `Value`, the classes you pass, and Foundation's property-list
/// classes (strings, numbers, data, dates, arrays, dictionaries, sets, URLs, UUIDs, `NSNull`).
/// Every stored archive carries a checksum; before unarchiving, the cache checks it and every
/// class the archive names against the allow-list, so a damaged archive or one naming another
/// class is a miss, counted in `ObjectCacheStatistics.decodeFailures` and removed, never a
/// trap. An object whose class does not support secure coding (or holds one that does not) is
/// refused by `set` with `ObjectCacheError.Code.encodingFailed`.
///
/// On Linux, swift-corelibs-foundation's archiver stops the process where Apple's throws: on
/// an object that does not support secure coding (checked here before archiving), and on an
/// archived object of another class than an `init(coder:)` asks for. The second can only
/// happen when a class changes what it encodes under a key: change the key, or the cache's
/// `ObjectCacheConfiguration.schemaVersion` (which starts the cache empty).
///
/// Decoded objects are not kept in memory (they are not `Sendable`); the memory tier holds
/// their archives, and each read unarchives. Everything else (pins, observation, expiry,
/// `ObjectCache.trimMemory(_:)`) is the ``archives`` cache's.
public final class ArchivedObjectCache<Key: Hashable & Codable & Sendable, Value: NSObject & NSSecureCoding>: Sendable {
    /// The cache of archives underneath.
    public let archives: ObjectCache<Key, Data>
    let allowed: AllowedClasses

    /// Opens (or creates) a cache of archived objects in `directory`.
    ///
    /// - Parameters:
    ///   - directory: A directory used by this cache alone.
    ///   - allowedClasses: The classes besides `Value` and Foundation's property-list classes
    ///     that its archives may hold.
    ///   - configuration: The settings of the cache of archives.
    /// - Throws: The errors of `ObjectCache/init(directory:configuration:migrations:eventHandler:)`.
    public convenience init(
        directory: URL, allowedClasses: [AnyClass] = [], configuration: ObjectCacheConfiguration = .init()
    ) throws {
        try self.init(
            archives: ObjectCache<Key, Data>(directory: directory, configuration: configuration),
            allowedClasses: allowedClasses)
    }

    /// A cache of archived objects over `archives` (a namespace of a `CacheStore`).
    public init(archives: ObjectCache<Key, Data>, allowedClasses: [AnyClass] = []) {
        self.archives = archives
        self.allowed = AllowedClasses([Value.self] + allowedClasses)
    }

    /// The object for `key`, or `nil`: never stored, expired, or an archive that does not
    /// unarchive as `Value` (counted and removed).
    ///
    /// - Throws: `ObjectCacheError` for a disk failure.
    public func value(forKey key: Key) throws -> Value? {
        guard let payload = try archives.value(forKey: key) else { return nil }
        do {
            return try ArchivePayload.unarchive(payload, as: Value.self, allowing: allowed)
        } catch {
            archives.dropUndecodable(key, error: error)
            return nil
        }
    }

    /// Archives `value` and stores it under `key`, on disk when it returns.
    ///
    /// - Throws: `ObjectCacheError.Code.encodingFailed` for an object (or one it holds) that
    ///   does not support secure coding; `ObjectCacheError` for a disk failure.
    public func set(_ value: Value, forKey key: Key, expiresAfter: Duration? = nil) throws {
        let payload: Data
        do {
            payload = try ArchivePayload.archive(value)
        } catch {
            throw ObjectCacheError(
                code: .encodingFailed, message: "the object could not be archived with secure coding",
                key: "\(key)", operation: .set, cause: error)
        }
        try archives.set(payload, forKey: key, expiresAfter: expiresAfter)
    }

    /// Removes the object for `key`; returns whether there was one.
    @discardableResult
    public func removeValue(forKey key: Key) throws -> Bool { try archives.removeValue(forKey: key) }

    /// Whether an object is stored for `key` (without unarchiving it).
    public func containsValue(forKey key: Key) throws -> Bool { try archives.containsValue(forKey: key) }

    /// Removes every object.
    public func removeAll() throws { try archives.removeAll() }

    /// The number of objects stored.
    public var count: Int { archives.count }

    /// The counters of the cache of archives; objects that failed to unarchive count as
    /// `ObjectCacheStatistics.decodeFailures`.
    public var statistics: ObjectCacheStatistics { archives.statistics }

    /// Closes the cache; later calls throw.
    public func close() throws { try archives.close() }
}

extension CacheStore {
    /// The cache of archived objects of namespace `name`, opened on first use (see
    /// `ArchivedObjectCache`).
    ///
    /// - Throws: The errors of `CacheStore/objects(_:of:keyType:configuration:migrations:)`.
    public func archivedObjects<Key: Hashable & Codable & Sendable, Value: NSObject & NSSecureCoding>(
        _ name: String, of valueType: Value.Type, keyType: Key.Type = String.self, allowedClasses: [AnyClass] = [],
        configuration: ObjectCacheConfiguration = ObjectCacheConfiguration()
    ) throws -> ArchivedObjectCache<Key, Value> {
        ArchivedObjectCache(
            archives: try objects(name, of: Data.self, keyType: keyType, configuration: configuration),
            allowedClasses: allowedClasses)
    }
}
