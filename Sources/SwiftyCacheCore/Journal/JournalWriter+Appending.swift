/// The file the journal writer appends to: opened after recovery and, where other caches
/// write the directory too (``DiskLRUCache/Sharing``), opened again after another cache's
/// rebuild, a line a killed writer tore cut off before anything follows it, and its size kept
/// as the others append.
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
}
