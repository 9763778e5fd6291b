import SwiftyCacheCore

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// How a directory's entries are named from their keys, recorded in the directory so that a
/// change of default never orphans what an earlier release wrote.
///
/// The record is the file `objectcache-keys`, one line: `xxhash128` or `sha256`. A directory
/// without it was written before the record existed, with SHA-256 names: if it holds entries,
/// it keeps SHA-256 (and the record says so from then on); if it is empty, it is new and takes
/// the current default, xxHash. The record is written durably before the first entry.
enum KeyNaming: String {
    case xxHash128 = "xxhash128"
    case sha256 = "sha256"

    static let record = DirectoryRecord(fileName: "objectcache-keys", description: "the key naming record")

    var hasher: any CacheKeyHasher {
        switch self {
        case .xxHash128: XXHashKeyHasher()
        case .sha256: SHA256KeyHasher()
        }
    }

    /// The naming of the cache in `directory`, which `disk` has open; recorded there if it was
    /// not (unless the cache is read-only).
    ///
    /// - Throws: ``ObjectCacheError``: ``ObjectCacheError/Code/invalidConfiguration`` for a
    ///   record this release does not know (a later release's), never guessed over;
    ///   ``ObjectCacheError/Code/diskFailure`` when the record cannot be read or written.
    static func resolve(directory: URL, disk: DiskLRUCache, fileSystem: any FileSystem) throws -> KeyNaming {
        if let text = try record.line(in: directory, fileSystem: fileSystem) {
            guard let naming = KeyNaming(rawValue: text) else {
                throw ObjectCacheError.invalidConfiguration(
                    "\(record.path(in: directory)) names keys by \"\(text)\", which this release does not know",
                    operation: .open)
            }
            return naming
        }
        let naming: KeyNaming = disk.count > 0 ? .sha256 : .xxHash128
        guard !disk.options.isReadOnly else { return naming }
        try record.write(line: naming.rawValue, in: directory, fileSystem: fileSystem)
        return naming
    }

    /// Deletes the record of a directory whose entries the engine has deleted (and its
    /// ``SchemaRecord``, ``StorageClassRecord`` and ``WarmStartRecord``), then the directory
    /// itself unless something else (a user's file) is left in it. The record goes last, so that a failure before it never leaves entries without their naming.
    static func removeRecord(in directory: URL, fileSystem: any FileSystem = SystemFileSystem()) {
        SchemaRecord.remove(in: directory, fileSystem: fileSystem)
        StorageClassRecord.remove(in: directory, fileSystem: fileSystem)
        WarmStartRecord.remove(in: directory, fileSystem: fileSystem)
        record.remove(in: directory, fileSystem: fileSystem)
        try? fileSystem.rmdir(directory.path(percentEncoded: false))
    }
}
