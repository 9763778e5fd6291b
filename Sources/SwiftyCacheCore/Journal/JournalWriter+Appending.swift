/// The file the journal writer appends to: opened after recovery and, where other caches
/// write the directory too (``DiskLRUCache/Sharing``), opened again after another cache's
/// rebuild, a line a killed writer tore cut off before anything follows it (under the
/// exclusive lock), its size kept as the others append, and lines appended while others append
/// too (under the shared lock).
extension JournalWriter {
    /// Opens the existing journal for appending.
    mutating func openForAppending() throws(CacheError) {
        do {
            fd = try directory.fileSystem.open(directory.journalPath, flags: OpenFlags.append, mode: FileModes.file)
        } catch {
            throw CacheError.ioFailure(error, operation: .open, path: directory.journalPath)
        }
        output.lock()
        output.size = try? directory.fileSystem.size(of: fd)
        output.unlock()
    }

    /// Appends to the file the journal's name holds now, another cache's rebuild having
    /// replaced the one this writer had open (``DiskLRUCache/Sharing``).
    mutating func reopenForAppending() throws(CacheError) {
        let newFD: Int32
        do {
            newFD = try directory.fileSystem.open(directory.journalPath, flags: OpenFlags.append, mode: FileModes.file)
        } catch {
            throw CacheError.ioFailure(error, operation: .open, path: directory.journalPath)
        }
        output.lock()
        if fd >= 0 { try? directory.fileSystem.close(fd) }
        fd = newFD
        output.size = try? directory.fileSystem.size(of: newFD)
        output.unlock()
    }

    /// Cuts off what follows the journal's last whole line at `end`: a line a writer that
    /// shared the directory was killed while appending (the caller holds the operation lock,
    /// so nobody is appending now). A line never follows a torn one.
    mutating func cutTornTail(at end: Int64) throws(CacheError) {
        output.lock()
        defer { output.unlock() }
        do {
            try directory.fileSystem.truncate(fd, to: end)
            output.size = end
        } catch {
            let failure = CacheError.ioFailure(error, operation: .commit, path: directory.journalPath)
            self.failure = failure
            throw failure
        }
    }

    /// The journal file's size as the writer kept it through its appends; `nil` when unknown.
    var knownSize: Int64? {
        output.lock()
        defer { output.unlock() }
        return output.size
    }

    /// Notes the journal's size after another cache appended to it: what a write that fails
    /// for lack of space is cut back to.
    func noteSize(_ size: Int64) {
        output.lock()
        output.size = size
        output.unlock()
    }

    /// Writes the buffered lines with one `write` while other caches may append to the journal
    /// at the same moment (``DiskLRUCache/Sharing``, the operation lock held shared): the
    /// descriptor's `O_APPEND` puts them after every line appended before, whole. A short write
    /// is a failure, never followed by a second `write` for the rest (another cache's line may
    /// already follow the first part; replays skip such a torn start), and nothing is cut off
    /// (where the file ends is not this writer's to know). Returns where the lines start and
    /// end in the journal.
    ///
    /// - Throws: as ``flush(operation:key:freesSpace:)``, after which the journal is broken.
    /// - Complexity: one `write`, one `lseek`.
    mutating func appendAlongsideOthers(operation: CacheError.Operation, key: String?) throws(CacheError)
        -> Range<Int64>
    {
        if let failure { throw CacheError.journalUnavailable(failure, operation: operation, key: key) }
        output.lock()
        defer {
            output.unlock()
            buffer.removeAll(keepingCapacity: true)
        }
        if let deferred = output.takeFailure() {
            adopt(deferred)
            throw CacheError.journalUnavailable(deferred, operation: operation, key: key)
        }
        let fileSystem = directory.fileSystem
        let fd = fd
        // The others' appends move the end: the size this writer kept is no longer known.
        output.size = nil
        do {
            let count = buffer.count
            let written = try buffer.withUnsafeBytes { (bytes) throws(SystemCallFailure) -> Int in
                try fileSystem.write(fd, bytes)
            }
            guard written == count else { throw SystemCallFailure(call: "write", errno: Errno.io) }
            let end = try fileSystem.offset(of: fd)
            guard end >= Int64(count) else { throw SystemCallFailure(call: "lseek", errno: Errno.io) }
            return (end - Int64(count))..<end
        } catch {
            let failure = CacheError.ioFailure(error, operation: operation, path: directory.journalPath, key: key)
            self.failure = failure
            throw failure
        }
    }
}
