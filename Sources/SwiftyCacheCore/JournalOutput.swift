#if canImport(Darwin)
import Darwin
#elseif canImport(Glibc)
@preconcurrency import Glibc
#elseif canImport(Musl)
@preconcurrency import Musl
#endif

/// The order of the journal file's writes, kept by a lock of its own so that buffered `READ`
/// lines can be written after the cache lock is released.
///
/// Every write to the journal's descriptor, and every change of that descriptor (a rebuild's
/// swap, the close), holds this lock. A reader whose `READ` lines filled the buffer takes them
/// under the cache lock together with this lock (``JournalWriter/takeReadFlush()``), releases
/// the cache lock, and writes them (``JournalReadFlush/write()``): any line journaled after
/// them is written by a later holder of the cache lock, which waits here first, so the file
/// keeps the order of the lines. Readers of other keys no longer wait behind a `write(2)`.
///
/// Lock order: the cache lock, then this one; a thread holding only this one never takes the
/// cache lock.
final class JournalOutput: @unchecked Sendable {
    // @unchecked Sendable is sound: `deferredFailure` is read and written only between
    // pthread_mutex_lock and pthread_mutex_unlock of `mutex`, which is allocated and
    // initialized in init, never moved, and destroyed in deinit, when no reference is left.
    private let mutex: UnsafeMutablePointer<pthread_mutex_t>
    /// A write made outside the cache lock that failed, for the next holder of the cache lock
    /// to adopt (``JournalWriter`` then stops appending, as for any failed write).
    private var deferredFailure: CacheError?

    init() {
        mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
        mutex.initialize(to: pthread_mutex_t())
        initializeMutex(mutex)
    }

    deinit {
        pthread_mutex_destroy(mutex)
        mutex.deinitialize(count: 1)
        mutex.deallocate()
    }

    func lock() { pthread_mutex_lock(mutex) }
    func unlock() { pthread_mutex_unlock(mutex) }

    /// Records the failure of a write outside the cache lock. Call with the lock held.
    func recordFailure(_ failure: CacheError) {
        if deferredFailure == nil { deferredFailure = failure }
    }

    /// The failure of a write outside the cache lock, once. Call with the lock held.
    func takeFailure() -> CacheError? {
        defer { deferredFailure = nil }
        return deferredFailure
    }
}

/// Buffered `READ` lines taken under the cache lock, with the journal's output lock held, to be
/// written once the cache lock is released. ``write()`` must be called exactly once, on the
/// thread that took them: it releases the output lock.
struct JournalReadFlush {
    let output: JournalOutput
    let fileSystem: any FileSystem
    let fd: Int32
    let bytes: [UInt8]
    let path: String

    /// Writes the lines and releases the output lock. A failure is kept for the cache to adopt:
    /// a torn line may now end the file, so nothing more is appended to it until a rebuild.
    ///
    /// - Complexity: One `write(2)` of at most ``JournalWriter/readBufferLimit`` bytes and a
    ///   line.
    func write() {
        defer { output.unlock() }
        do {
            try fileSystem.writeAll(fd, bytes)
        } catch {
            output.recordFailure(CacheError.ioFailure(error, operation: "read", path: path))
        }
    }
}
