/// The cache's directory and the files the engine keeps in it beside the values: the journal's
/// names, the lock file and the clean marker. It creates the directory, takes its lock, empties
/// it, leaves the marker and syncs it. Immutable, so it is shared freely outside the lock.
struct CacheDirectory: Sendable {
    let fileSystem: any FileSystem
    /// The directory, without a trailing slash.
    let path: String

    var journalPath: String { path(CacheFileName.journal.name) }
    var temporaryJournalPath: String { path(CacheFileName.temporaryJournal.name) }
    var backupJournalPath: String { path(CacheFileName.backupJournal.name) }
    /// The advisory lock file; not part of the Java format, and ignored by it.
    var lockPath: String { path(CacheFileName.lock.name) }
    var operationLockPath: String { path(CacheFileName.operationLock.name) }
    /// Left by `close()`, removed by open: its presence means no stray file can exist, so open
    /// skips sweeping the directory. Not part of the Java format, and ignored by it.
    var cleanMarkerPath: String { path(CacheFileName.cleanMarker.name) }
    var pinsPath: String { path(CacheFileName.pins.name) }

    /// The path of `name` in the directory.
    func path(_ name: String) -> String { path + "/" + name }

    /// A failed write at `path` in the directory: ``CacheError/directoryVanished(_:operation:path:key:file:line:)``
    /// when the call found no such file because the directory itself is gone (the one test
    /// for it), an ``CacheError/Code/ioFailure`` otherwise.
    func writeFailure(_ error: SystemCallFailure, operation: CacheError.Operation, path: String, key: String?)
        -> CacheError
    {
        if error.errno == Errno.noEntry, (try? fileSystem.kind(of: self.path)) != .directory {
            return CacheError.directoryVanished(error, operation: operation, path: path, key: key)
        }
        return CacheError.ioFailure(error, operation: operation, path: path, key: key)
    }

    /// Creates the directory and any missing parents, the ones it creates with mode 0700.
    func create() throws(CacheError) {
        var prefix = path.hasPrefix("/") ? "" : "."
        for component in path.split(separator: "/") {
            prefix += "/" + component
            do {
                try fileSystem.mkdir(prefix, mode: FileModes.directory)
            } catch  where error.errno == Errno.exists {
                continue
            } catch  where error.errno == Errno.notDirectory {
                throw CacheError.invalidConfiguration(
                    "a component of the cache path is not a directory", path: prefix, operation: .open, cause: error)
            } catch {
                throw CacheError.ioFailure(error, operation: .creatingDirectory, path: prefix)
            }
        }
        let kind: FileKind?
        do {
            kind = try fileSystem.kind(of: path)
        } catch {
            throw CacheError.ioFailure(error, operation: .open, path: path)
        }
        // A symbolic link is accepted here: the user chose that path. The cache never follows
        // links *inside* the directory.
        guard kind == .directory || kind == .symbolicLink else {
            throw CacheError.invalidConfiguration(
                "the cache path exists and is not a directory", path: path, operation: .open)
        }
    }

    /// Opens the lock file and takes its exclusive advisory lock.
    ///
    /// A cache of this process on the same directory is refused at once, through a registry of
    /// locked files. Another process's lock is retried for up to 0.1 s before giving up: a lock
    /// released by `close()` lingers in any child forked meanwhile until that child calls `exec`.
    func acquireLock() throws(CacheError) -> DirectoryLock {
        let fd: Int32
        let identity: FileIdentity
        do {
            fd = try fileSystem.open(lockPath, flags: OpenFlags.lockFile, mode: FileModes.file)
        } catch {
            throw CacheError.ioFailure(error, operation: .lockingDirectory, path: lockPath)
        }
        do {
            identity = try fileSystem.identity(of: fd)
        } catch {
            try? fileSystem.close(fd)
            throw CacheError.ioFailure(error, operation: .lockingDirectory, path: lockPath)
        }
        guard DirectoryLock.register(identity) else {
            try? fileSystem.close(fd)
            throw CacheError.directoryLocked(path)
        }
        var attempts = 0
        while true {
            do {
                try fileSystem.lockExclusively(fd)
                return DirectoryLock(fd: fd, identity: identity)
            } catch  where error.errno == Errno.wouldBlock && attempts < 100 {
                attempts += 1
                DirectoryLock.pause()
            } catch {
                DirectoryLock.unregister(identity)
                try? fileSystem.close(fd)
                if error.errno == Errno.wouldBlock { throw CacheError.directoryLocked(path, cause: error) }
                throw CacheError.ioFailure(error, operation: .lockingDirectory, path: lockPath)
            }
        }
    }

    /// Where a new segment is written before it gets its own name (``CacheFileName/newSegment``).
    var newSegmentPath: String { path(CacheFileName.newSegment.name) }

    /// Flushes the directory itself, so that renames and creations in it survive a power loss.
    func sync() throws(SystemCallFailure) {
        let fd = try fileSystem.open(path, flags: OpenFlags.directory, mode: 0)
        defer { try? fileSystem.close(fd) }
        try fileSystem.fsync(fd)
    }

    /// Whether the directory itself still exists (something may delete it underneath the cache).
    func exists() throws(CacheError) -> Bool {
        do {
            return try fileSystem.kind(of: path) != nil
        } catch {
            throw CacheError.ioFailure(error, operation: .restoringDirectory, path: path)
        }
    }
}
