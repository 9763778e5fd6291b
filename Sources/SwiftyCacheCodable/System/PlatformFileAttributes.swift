#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

#if canImport(Darwin)
import Foundation
#endif

/// What the platform attaches to a cache's directory beside its files: whether backups skip
/// it, and its data-protection class. Only Apple platforms have either; elsewhere both are
/// accepted and do nothing (the engine's files are `0600` in `0700` folders everywhere).
enum PlatformFileAttributes {
    /// Whether the platform applies ``apply(to:excludedFromBackup:protection:)``.
    static var isSupported: Bool {
        #if canImport(Darwin)
        true
        #else
        false
        #endif
    }

    /// Applies backup exclusion and a protection class to `directory`, at an open.
    ///
    /// On Apple platforms `excludedFromBackup` sets the directory's
    /// `URLResourceValues.isExcludedFromBackup` (it covers everything inside), and `protection`
    /// sets the `FileAttributeKey.protectionKey` of the directory and of the files already in
    /// it. Files the cache creates later take the class of their directory, as the platform
    /// gives a new file its directory's class. When the directory already has the class
    /// asked for, nothing is walked: the open stays O(1); a change of class walks the
    /// directory's files once.
    ///
    /// - Throws: The platform's error when an attribute cannot be set.
    static func apply(to directory: URL, excludedFromBackup: Bool?, protection: FileProtectionType?) throws {
        #if canImport(Darwin)
        if let excludedFromBackup {
            var url = directory
            var values = URLResourceValues()
            values.isExcludedFromBackup = excludedFromBackup
            try url.setResourceValues(values)
        }
        guard let protection else { return }
        let manager = FileManager.default
        let path = directory.path(percentEncoded: false)
        let current = (try? manager.attributesOfItem(atPath: path))?[.protectionKey] as? FileProtectionType
        guard current != protection else { return }
        try manager.setAttributes([.protectionKey: protection], ofItemAtPath: path)
        for name in try manager.contentsOfDirectory(atPath: path) {
            try manager.setAttributes([.protectionKey: protection], ofItemAtPath: path + "/" + name)
        }
        #endif
    }
}
