#if canImport(Darwin)
import Darwin
#elseif canImport(Glibc)
@preconcurrency import Glibc
#elseif canImport(Musl)
@preconcurrency import Musl
#else
#error("Unsupported platform")
#endif

package enum Errno {
    package static let noEntry = ENOENT
    package static let exists = EEXIST
    package static let notDirectory = ENOTDIR
    package static let wouldBlock = EWOULDBLOCK
    package static let noSpace = ENOSPC
    package static let io = EIO
    package static let accessDenied = EACCES
    /// What Apple platforms answer for a file whose data-protection class keeps it closed.
    package static let notPermitted = EPERM
    package static let loop = ELOOP
    package static let nameTooLong = ENAMETOOLONG
    package static let notEmpty = ENOTEMPTY
    package static let readOnlyFileSystem = EROFS
    package static let noDeviceOrAddress = ENXIO
    package static let isDirectory = EISDIR
    /// What `link(2)` answers on a file system without hard links (FAT, exFAT, some FUSE ones).
    package static let noHardLinks = Set<Int32>([EPERM, EOPNOTSUPP, ENOTSUP, ENOSYS, EMLINK])
}
