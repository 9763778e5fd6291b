#if canImport(Darwin)
import Darwin
#elseif canImport(Glibc)
@preconcurrency import Glibc
#elseif canImport(Musl)
@preconcurrency import Musl
#else
#error("Unsupported platform")
#endif

/// What the index asks of the system about its large arrays. (Huge pages, `MADV_HUGEPAGE`,
/// were tried for them: a reopen of two million entries went from 0.50 s to 0.39 s at best but
/// to 0.85 s when the kernel compacted memory to find them, so they are not asked for.)
///
/// glibc serves even large allocations from its heap here, and keeps the pages of a freed
/// block resident until they are reused: each time one of the index's arrays doubles, the old
/// array's pages would stay, about 15% of the index at two million entries. Darwin's allocator
/// and musl's return large blocks by themselves.
enum HeapMemory {
    /// Returns the whole free pages of glibc's heap to the system (`malloc_trim`).
    ///
    /// - Complexity: O(free blocks); call it after freeing a large block, not per operation.
    static func returnToSystem() {
        #if canImport(Glibc)
        _ = mallocTrim?(0)
        #endif
    }

    #if canImport(Glibc)
    /// glibc's `malloc_trim`, looked up once: `<malloc.h>` is not part of the Glibc module.
    private static let mallocTrim: (@convention(c) (Int) -> Int32)? = {
        guard let symbol = dlsym(nil, "malloc_trim") else { return nil }
        return unsafeBitCast(symbol, to: (@convention(c) (Int) -> Int32).self)
    }()
    #endif

    /// The size past which a freed array is worth returning.
    static let threshold = 1 << 20
}
