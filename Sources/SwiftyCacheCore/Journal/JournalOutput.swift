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
    // @unchecked Sendable is sound: `deferredFailure` and `size` are read and written only
    // between `lock()` and `unlock()` of `mutex` (every caller holds it, as each method says).
    private let mutex = OrderedMutex()
    /// A write made outside the cache lock that failed, for the next holder of the cache lock
    /// to adopt (``JournalWriter`` then stops appending, as for any failed write).
    private var deferredFailure: CacheError?
    /// The journal file's size, kept as every write goes through (`nil` when unknown): what a
    /// write that failed for lack of space is cut back to.
    var size: Int64?

    func lock() { mutex.lock() }
    func unlock() { mutex.unlock() }

    /// Records the failure of a write outside the cache lock. Call with the lock held.
    func recordFailure(_ failure: CacheError) {
        if deferredFailure == nil { deferredFailure = failure }
    }

    /// Appends `bytes` to the journal at `fd`, keeping ``size``. When the disk is full and the
    /// cache has a ``SpaceReserve``, what the failed write left is cut off, the reserve is
    /// freed and the write tried once more: a full disk the cache filled never stops a removal
    /// from being journaled. Call with the lock held.
    ///
    /// - Complexity: One `write(2)`; on a full disk, an `ftruncate`, an `unlink` and a second one.
    func append(
        _ bytes: [UInt8], to fd: Int32, with fileSystem: any FileSystem, reserve: SpaceReserve?
    ) throws(SystemCallFailure) {
        do {
            try fileSystem.writeAll(fd, bytes)
        } catch  where error.errno == Errno.noSpace {
            guard let known = size, let reserve, (try? fileSystem.truncate(fd, to: known)) != nil, reserve.release()
            else {
                size = nil
                throw error
            }
            do {
                try fileSystem.writeAll(fd, bytes)
            } catch {
                size = nil
                throw error
            }
        } catch {
            size = nil
            throw error
        }
        size = size.map { $0 + Int64(bytes.count) }
    }

    /// The failure of a write outside the cache lock, once. Call with the lock held.
    func takeFailure() -> CacheError? {
        defer { deferredFailure = nil }
        return deferredFailure
    }
}
