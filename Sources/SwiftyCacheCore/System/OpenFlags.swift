#if canImport(Darwin)
import Darwin
#elseif canImport(Glibc)
@preconcurrency import Glibc
#elseif canImport(Musl)
@preconcurrency import Musl
#else
#error("Unsupported platform")
#endif

/// Flags the engine opens files with. Writers never follow a planted symbolic link.
package enum OpenFlags {
    /// `O_NONBLOCK`: a FIFO or device planted under a cache file's name must never make an open
    /// or a read wait; on a regular file it changes nothing.
    package static let readOnly: Int32 = O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK
    package static let createTruncate: Int32 = O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK
    package static let append: Int32 = O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK
    /// A new packed segment: never over an existing file.
    package static let createSegment: Int32 = O_RDWR | O_CREAT | O_EXCL | O_APPEND | O_CLOEXEC | O_NOFOLLOW
    /// A packed segment a clean session left, to append to.
    package static let appendSegment: Int32 = O_RDWR | O_APPEND | O_CLOEXEC | O_NOFOLLOW
    package static let lockFile: Int32 = O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW
    package static let directory: Int32 = O_RDONLY | O_CLOEXEC | O_DIRECTORY
}

/// Permission bits for what the cache creates: private to the user.
package enum FileModes {
    package static let file: UInt32 = 0o600
    package static let directory: UInt32 = 0o700
}
