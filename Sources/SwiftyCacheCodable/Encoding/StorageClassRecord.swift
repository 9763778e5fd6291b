import SwiftyCacheCore

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The ``CacheStorageClass`` a cache directory was created with, kept in the directory
/// (`objectcache-class`, one word and a newline) so that opening it with the other class is an
/// error rather than a silent second copy under the other root.
///
/// A directory without the record (created by an earlier release, or by a cache that declared
/// no class) takes the class of the first open that declares one.
enum StorageClassRecord {
    static let record = DirectoryRecord(fileName: "objectcache-class", description: "the storage class record")

    /// The class the record holds, or `nil` where there is none.
    ///
    /// - Throws: ``ObjectCacheError``: ``ObjectCacheError/Code/diskFailure`` when the record
    ///   cannot be read, ``ObjectCacheError/Code/invalidConfiguration`` for one that names no
    ///   class (never guessed over).
    static func read(in directory: URL, fileSystem: any FileSystem) throws -> CacheStorageClass? {
        guard let text = try record.line(in: directory, fileSystem: fileSystem) else { return nil }
        guard let storageClass = CacheStorageClass(rawValue: text) else {
            throw ObjectCacheError.invalidConfiguration(
                "\(record.path(in: directory)) holds \"\(text)\", which is not a storage class", operation: .open)
        }
        return storageClass
    }

    /// Checks that `directory` was created with `storageClass`, before the engine opens it.
    ///
    /// - Throws: ``ObjectCacheError/Code/storageClassConflict`` when it records the other class.
    static func check(_ storageClass: CacheStorageClass, in directory: URL, fileSystem: any FileSystem) throws {
        if let recorded = try read(in: directory, fileSystem: fileSystem), recorded != storageClass {
            throw ObjectCacheError.storageClassConflict(
                directory.path(percentEncoded: false), recorded: recorded, requested: storageClass)
        }
    }

    /// Records `storageClass` durably unless the directory records a class already.
    static func adopt(_ storageClass: CacheStorageClass, in directory: URL, fileSystem: any FileSystem) throws {
        guard try read(in: directory, fileSystem: fileSystem) == nil else { return }
        try write(storageClass, in: directory, fileSystem: fileSystem)
    }

    /// Records `storageClass` durably, replacing any record (a namespace moved to the other
    /// class).
    static func write(_ storageClass: CacheStorageClass, in directory: URL, fileSystem: any FileSystem) throws {
        try record.write(line: storageClass.rawValue, in: directory, fileSystem: fileSystem)
    }

    /// Deletes the record of a directory whose entries the engine has deleted.
    static func remove(in directory: URL, fileSystem: any FileSystem) {
        record.remove(in: directory, fileSystem: fileSystem)
    }
}
