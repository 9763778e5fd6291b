#if canImport(Darwin)
import Darwin
#elseif canImport(Glibc)
@preconcurrency import Glibc
#elseif canImport(Musl)
@preconcurrency import Musl
#else
#error("Unsupported platform")
#endif

/// What `lstat` or `fstat` says of a file: enough to tell a regular file, its size, and
/// whether it is still the same file with the same contents as when last looked at.
package struct FileStatus: Hashable, Sendable {
    package var kind: FileKind
    package var size: Int64
    package var identity: FileIdentity
    package var modificationSeconds: Int64
    package var modificationNanoseconds: Int64
    /// The number of names the file has; 0 once it was deleted while open.
    package var linkCount: Int

    package init(
        kind: FileKind, size: Int64, identity: FileIdentity, modificationSeconds: Int64, modificationNanoseconds: Int64,
        linkCount: Int = 1
    ) {
        self.kind = kind
        self.size = size
        self.identity = identity
        self.modificationSeconds = modificationSeconds
        self.modificationNanoseconds = modificationNanoseconds
        self.linkCount = linkCount
    }
}

/// The kinds of directory entry the cache cares about.
package enum FileKind: Sendable {
    case regular, directory, symbolicLink, other
}

/// A file's device and inode numbers.
package struct FileIdentity: Hashable, Sendable {
    package var device: UInt64
    package var inode: UInt64

    package init(device: UInt64, inode: UInt64) {
        self.device = device
        self.inode = inode
    }
}
