#if canImport(FoundationEssentials)
package import FoundationEssentials
#else
package import Foundation
#endif

/// What the layers above the engine may ask of a cache directory that is not open, so that
/// they never re-implement its file names or delete behind its back.
extension DiskLRUCache {
    /// The bytes of the committed values stored in `directory`, a cache directory that is not
    /// open in this process.
    ///
    /// - Complexity: O(files in the directory) in file storage; in packed storage, a read-only
    ///   open (O(journal)).
    package static func storedValueBytes(in directory: URL, fileSystem: any FileSystem = SystemFileSystem()) -> Int {
        let cacheDirectory = CacheDirectory(fileSystem: fileSystem, path: normalizedPath(of: directory))
        guard let header = try? cacheDirectory.journalHeader(), case .packed(let inlineLimit) = header.format else {
            return StorageSelection.fileValueBytes(in: cacheDirectory)
        }
        let cache = try? DiskLRUCache(
            directory: directory, appVersion: header.appVersion, valueCount: header.valueCount, maxSize: Int.max,
            options: Options(isReadOnly: true, storage: .packed(inlineLimit: inlineLimit)), fileSystem: fileSystem)
        return cache?.size ?? 0
    }

    /// Deletes a cache directory that no cache has open: opens it with the `appVersion` and
    /// `valueCount` its journal records and deletes it (see `delete()`), so that only the
    /// cache's own files go, and the directory itself only if nothing else is left in it.
    ///
    /// - Throws: ``CacheError``: ``CacheError/Code/directoryLocked`` when a cache has it open,
    ///   ``CacheError/Code/notACacheDirectory``, ``CacheError/Code/ioFailure``.
    package static func removeDirectory(at directory: URL, fileSystem: any FileSystem = SystemFileSystem()) throws {
        let cacheDirectory = CacheDirectory(fileSystem: fileSystem, path: normalizedPath(of: directory))
        guard try cacheDirectory.exists() else { return }
        let header = try cacheDirectory.journalHeader()
        var storage = Storage.files
        if case .packed(let inlineLimit) = header?.format { storage = .packed(inlineLimit: inlineLimit) }
        let cache = try DiskLRUCache(
            directory: directory, appVersion: header?.appVersion ?? 1, valueCount: header?.valueCount ?? 1,
            maxSize: Int.max, options: Options(storage: storage), fileSystem: fileSystem)
        try cache.delete()
    }

    /// Moves a cache directory that no cache has open to `destination` (a path on the same
    /// volume whose folder does not exist, or is empty), with one `rename(2)` under the
    /// directory's lock: a crash leaves it at one path or the other, whole.
    ///
    /// - Throws: ``CacheError``: ``CacheError/Code/directoryLocked`` when a cache has it open,
    ///   ``CacheError/Code/ioFailure`` when the rename fails (`EXDEV`: another volume;
    ///   `ENOTEMPTY`: something is at `destination`).
    package static func moveDirectory(
        at source: URL, to destination: URL, fileSystem: any FileSystem = SystemFileSystem()
    ) throws {
        let cacheDirectory = CacheDirectory(fileSystem: fileSystem, path: normalizedPath(of: source))
        let lock = try cacheDirectory.acquireLock()
        defer { lock.release(using: fileSystem) }
        let target = normalizedPath(of: destination)
        do {
            try fileSystem.rename(cacheDirectory.path, to: target)
        } catch {
            throw CacheError.ioFailure(error, operation: .movingDirectory, path: target)
        }
    }
}
