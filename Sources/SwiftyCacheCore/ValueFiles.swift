/// Writing value files: `key.slot.tmp`, created for each edit and renamed into place by the
/// commit. Shared by ``Editor`` and the one-shot writes, which need no editor object.
extension DiskLRUCache {
    /// Creates `key.slot.tmp` (truncating a leftover), lets `body` write it, and closes it;
    /// returns what `body` returns, the byte count. On any failure the file is deleted.
    ///
    /// - Complexity: One `open`, `body`'s writes and one `close` (plus `fsync` with
    ///   ``Options/syncsWrites``); the path is built on the stack.
    func writeValueFile(key: String, slot: Int, _ body: (Int32) throws -> Int) throws -> Int {
        let fileSystem = environment.fileSystem
        let fd = try createTemporaryFile(key: key, slot: slot)
        var isOpen = true
        do {
            let count = try body(fd)
            if environment.syncsWrites {
                do { try fileSystem.fsync(fd) } catch {
                    throw CacheError.io(error, operation: "write", path: environment.dirtyPath(key, slot), key: key)
                }
            }
            isOpen = false
            do { try fileSystem.close(fd) } catch {
                throw CacheError.io(error, operation: "write", path: environment.dirtyPath(key, slot), key: key)
            }
            return count
        } catch let error as SystemCallError {
            if isOpen { try? fileSystem.close(fd) }
            try? environment.removeValueFileIfPresent(key, slot, temporary: true)
            throw CacheError.io(error, operation: "write", path: environment.dirtyPath(key, slot), key: key)
        } catch {
            if isOpen { try? fileSystem.close(fd) }
            try? environment.removeValueFileIfPresent(key, slot, temporary: true)
            throw error
        }
    }

    /// Opens a new, empty `key.slot.tmp` for writing.
    private func createTemporaryFile(key: String, slot: Int) throws -> Int32 {
        let fileSystem = environment.fileSystem
        let create = { () throws(SystemCallError) -> Int32 in
            try self.environment.withSlotPath(key, slot, temporary: true) { path throws(SystemCallError) in
                try fileSystem.open(cString: path, flags: OpenFlags.createTruncate, mode: FileModes.file)
            }
        }
        do {
            return try create()
        } catch where error.errno == Errno.loop {
            // Something planted a symbolic link where the temporary file goes. `O_NOFOLLOW`
            // refused it; remove the link itself and write a regular file.
            do {
                try environment.removeValueFileIfPresent(key, slot, temporary: true)
                return try create()
            } catch {
                throw CacheError.io(error, operation: "write", path: environment.dirtyPath(key, slot), key: key)
            }
        } catch where error.errno == Errno.noEntry {
            // The directory was deleted underneath the cache: recreate it and try once more.
            try restoreMissingDirectory()
            do {
                return try create()
            } catch {
                throw CacheError.io(error, operation: "write", path: environment.dirtyPath(key, slot), key: key)
            }
        } catch {
            throw CacheError.io(error, operation: "write", path: environment.dirtyPath(key, slot), key: key)
        }
    }
}
