#if canImport(Darwin)
import Darwin
#elseif canImport(Glibc)
@preconcurrency import Glibc
#elseif canImport(Musl)
@preconcurrency import Musl
#endif

/// The C library's `memchr`, for the journal's parsers: the line ends of a chunk, the escapes of
/// a block. The one place outside the file system's code that needs libc for it.
enum ByteSearch {
    /// The position of the first `byte` in `bytes` at or after `start`, or `nil`.
    ///
    /// - Complexity: O(bytes searched), a machine word or more at a time.
    @inline(__always)
    static func firstIndex(of byte: UInt8, in bytes: UnsafeRawBufferPointer, from start: Int = 0) -> Int? {
        guard let base = bytes.baseAddress, start < bytes.count else { return nil }
        guard let found = memchr(base + start, Int32(byte), bytes.count &- start) else { return nil }
        return base.distance(to: UnsafeRawPointer(found))
    }
}
