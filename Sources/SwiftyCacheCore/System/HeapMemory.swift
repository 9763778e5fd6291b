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

    /// The size from which an array is faulted in ahead (``FaultAhead``, ``prefault(_:)``).
    static let prefaultThreshold = 8 << 20

    /// Faults in the whole pages of `region`, which the caller is about to fill, with one call
    /// (`MADV_POPULATE_WRITE`, Linux 5.14 and later; elsewhere, or when it fails, the pages
    /// fault one at a time as they are first written, as they would have). Loading an index of
    /// ten million entries writes a gigabyte of fresh memory: one trap per 4 KiB page costs
    /// more than the kernel filling the pages in one go, markedly so in a virtual machine.
    static func prefault(_ region: UnsafeMutableRawBufferPointer) {
        #if os(Linux)
        guard let base = region.baseAddress else { return }
        let page = Int(sysconf(Int32(_SC_PAGESIZE)))
        guard page > 0 else { return }
        let start = (Int(bitPattern: base) &+ page &- 1) & ~(page &- 1)
        let end = (Int(bitPattern: base) &+ region.count) & ~(page &- 1)
        guard end > start, let aligned = UnsafeMutableRawPointer(bitPattern: start) else { return }
        _ = madvise(aligned, end &- start, 23)  // MADV_POPULATE_WRITE
        #endif
    }
}

/// Faults in the capacity reserved for an array that is about to be filled in bulk (the index at
/// a reopen) a window at a time, just ahead of the elements appended (``HeapMemory/prefault(_:)``):
/// the pages are filled one call per 2 MiB rather than by a trap each, and only pages about to be
/// written become resident, so a reservation from an estimate that proves too large costs no
/// memory. An array that grows by itself afterwards (a doubling) is left to fault as it is
/// written: its pages then cost little beside the appends.
struct FaultAhead {
    /// Bytes from the start of the array's storage faulted in, or written.
    private var faultedBytes = 0
    /// The capacity reserved through ``reserve(_:capacity:)``; another capacity is another buffer.
    private var capacity = -1

    static let window = 2 << 20

    /// Reserves room for `capacity` elements in `array`, to be faulted in as it fills.
    mutating func reserve<Element: BitwiseCopyable>(_ array: inout [Element], capacity: Int) {
        array.reserveCapacity(capacity)
        self.capacity =
            array.capacity &* MemoryLayout<Element>.stride >= HeapMemory.prefaultThreshold
            ? array.capacity : -1
        faultedBytes = array.count &* MemoryLayout<Element>.stride
    }

    /// Call after appending to `array`.
    ///
    /// - Complexity: O(1); one system call per ``window`` of bytes appended.
    @inline(__always)
    mutating func advance<Element: BitwiseCopyable>(_ array: inout [Element]) {
        guard array.capacity == capacity else { return }
        let stride = MemoryLayout<Element>.stride
        let capacityBytes = capacity &* stride
        let used = array.count &* stride
        guard used &+ Self.window / 2 > faultedBytes, faultedBytes < capacityBytes else { return }
        let start = Swift.max(faultedBytes, used)
        let end = Swift.min(capacityBytes, start &+ Self.window)
        faultedBytes = end
        array.withUnsafeMutableBufferPointer { buffer in
            // The storage runs to its capacity; the bytes past `count` are only advised.
            guard let base = buffer.baseAddress else { return }
            let raw = UnsafeMutableRawPointer(base)
            HeapMemory.prefault(UnsafeMutableRawBufferPointer(start: raw + start, count: end &- start))
        }
    }
}
