#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

#if canImport(Darwin)
import Foundation
#endif

/// The platform's directory for each ``CacheStorageClass``: the one place that knows where
/// caches and durable data live.
enum StorageRoots {
    /// The directory of `storageClass`.
    ///
    /// On Linux (and other Unix systems) the XDG base directories: `$XDG_CACHE_HOME` or
    /// `~/.cache` for purgeable namespaces, `$XDG_DATA_HOME` or `~/.local/share` for durable
    /// ones; a relative `XDG_…` value is ignored, as the specification says. On Apple
    /// platforms, the user domain's Caches and Application Support directories.
    static func root(
        for storageClass: CacheStorageClass,
        environment: [String: String] = ProcessInfo.processInfo.environment
    ) -> URL {
        #if canImport(Darwin)
        let directory: FileManager.SearchPathDirectory =
            storageClass == .durable ? .applicationSupportDirectory : .cachesDirectory
        return FileManager.default.urls(for: directory, in: .userDomainMask).first
            ?? FileManager.default.temporaryDirectory
        #else
        let (variable, fallback) =
            storageClass == .durable ? ("XDG_DATA_HOME", ".local/share") : ("XDG_CACHE_HOME", ".cache")
        if let xdg = environment[variable], xdg.hasPrefix("/") {
            return URL(filePath: xdg, directoryHint: .isDirectory)
        }
        let home = environment["HOME"].flatMap { $0.isEmpty ? nil : $0 } ?? homeDirectoryPath()
        return URL(filePath: home, directoryHint: .isDirectory).appending(path: fallback, directoryHint: .isDirectory)
        #endif
    }

    private static func homeDirectoryPath() -> String {
        FileManager.default.homeDirectoryForCurrentUser.path(percentEncoded: false)
    }
}
