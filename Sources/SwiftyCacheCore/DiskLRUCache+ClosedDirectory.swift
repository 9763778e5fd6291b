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
    /// - Complexity: O(files in the directory).
    package static func storedValueBytes(in directory: URL, fileSystem: any FileSystem = SystemFileSystem()) -> Int {
        FileStorage.valueBytes(in: CacheDirectory(fileSystem: fileSystem, path: normalizedPath(of: directory)))
    }

    /// Deletes a cache directory that no cache has open: takes its lock (so an open cache, in
    /// this process or another, makes it throw ``CacheError/Code/directoryLocked``), deletes
    /// its contents, then the directory itself.
    ///
    /// - Throws: ``CacheError``: ``CacheError/Code/directoryLocked``, or
    ///   ``CacheError/Code/ioFailure`` when the directory or its lock cannot be removed.
    package static func removeDirectory(at directory: URL, fileSystem: any FileSystem = SystemFileSystem()) throws {
        let cacheDirectory = CacheDirectory(fileSystem: fileSystem, path: normalizedPath(of: directory))
        guard try cacheDirectory.exists() else { return }
        let lock = try cacheDirectory.acquireLock()
        cacheDirectory.empty(keepingLock: true)
        do {
            try fileSystem.removeFileIfPresent(cacheDirectory.lockPath)
            lock.release(using: fileSystem)
            try fileSystem.rmdir(cacheDirectory.path)
        } catch {
            lock.release(using: fileSystem)
            throw CacheError.ioFailure(error, operation: "remove directory", path: cacheDirectory.path)
        }
    }
}
