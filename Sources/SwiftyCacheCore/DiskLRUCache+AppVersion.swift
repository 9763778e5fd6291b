#if canImport(FoundationEssentials)
package import FoundationEssentials
#else
package import Foundation
#endif

/// A new `appVersion` for a directory whose entries stay: what the object cache's schema
/// migrations need, where opening with another version would empty the directory.
extension DiskLRUCache {
    /// The `appVersion` the journal in `directory` records; `nil` when there is no journal, its
    /// header is damaged, or it is not a journal. Read without the directory lock: a caller
    /// opens the cache with it next, and a journal rewritten in between is refused by that open
    /// as any other version is (the directory emptied).
    package static func recordedAppVersion(in directory: URL, fileSystem: any FileSystem = SystemFileSystem()) -> Int? {
        let cacheDirectory = CacheDirectory(fileSystem: fileSystem, path: normalizedPath(of: directory))
        return (try? cacheDirectory.journalHeader())??.appVersion
    }

    /// Rewrites the journal with `newVersion` in its header, keeping every entry: the next open
    /// with `newVersion` finds them. The rewrite is a journal rebuild, published by `rename(2)`
    /// (synced with ``Options/syncsWrites``): a crash leaves the old header or the new one.
    ///
    /// - Throws: ``CacheError``: ``CacheError/Code/readOnly``, ``CacheError/Code/invalidConfiguration``
    ///   for a version outside `Int32`, the rebuild's I/O failure (the old journal stays).
    /// - Complexity: O(entries), once.
    package func changeAppVersion(to newVersion: Int) throws {
        guard !options.isReadOnly else { throw CacheError.readOnly(operation: .flush) }
        guard (Int(Int32.min)...Int(Int32.max)).contains(newVersion) else {
            throw CacheError.invalidConfiguration(
                "appVersion must fit in 32 bits (Int32), as the Java DiskLruCache reads it; got \(newVersion)",
                operation: .flush)
        }
        try outsideGroups {
            try rebuildGate.withLock { _ in
                try locked(operation: .flush) { state in
                    let previous = state.journal.appVersion
                    guard previous != newVersion else { return }
                    state.journal.appVersion = newVersion
                    do {
                        try state.rebuildJournal()
                    } catch {
                        state.journal.appVersion = previous
                        throw error
                    }
                }
            }
        }
    }
}
