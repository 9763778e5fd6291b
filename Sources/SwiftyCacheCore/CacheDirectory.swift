/// The cache's directory and the files the engine keeps in it beside the values: the journal's
/// names, the lock file and the clean marker. It creates the directory, takes its lock, empties
/// it, leaves the marker and syncs it. Immutable, so it is shared freely outside the lock.
struct CacheDirectory: Sendable {
    let fileSystem: any FileSystem
    /// The directory, without a trailing slash.
    let path: String

    /// The advisory lock file; not part of the Java format, and ignored by it.
    static let lockFileName = "journal.lock"
    /// Left by `close()`, removed by open: its presence means no stray file can exist, so open
    /// skips sweeping the directory. Not part of the Java format, and ignored by it.
    static let cleanMarkerFileName = "journal.clean"

    var journalPath: String { path(Journal.fileName) }
    var temporaryJournalPath: String { path(Journal.temporaryFileName) }
    var backupJournalPath: String { path(Journal.backupFileName) }
    var lockPath: String { path(Self.lockFileName) }
    var cleanMarkerPath: String { path(Self.cleanMarkerFileName) }

    /// The path of `name` in the directory.
    func path(_ name: String) -> String { path + "/" + name }

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
                    "a component of the cache path is not a directory", path: prefix, operation: "open", cause: error)
            } catch {
                throw CacheError.ioFailure(error, operation: "create directory", path: prefix)
            }
        }
        let kind: FileKind?
        do {
            kind = try fileSystem.kind(of: path)
        } catch {
            throw CacheError.ioFailure(error, operation: "open", path: path)
        }
        // A symbolic link is accepted here: the user chose that path. The cache never follows
        // links *inside* the directory.
        guard kind == .directory || kind == .symbolicLink else {
            throw CacheError.invalidConfiguration(
                "the cache path exists and is not a directory", path: path, operation: "open")
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
            throw CacheError.ioFailure(error, operation: "lock directory", path: lockPath)
        }
        do {
            identity = try fileSystem.identity(of: fd)
        } catch {
            try? fileSystem.close(fd)
            throw CacheError.ioFailure(error, operation: "lock directory", path: lockPath)
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
                throw CacheError.ioFailure(error, operation: "lock directory", path: lockPath)
            }
        }
    }

    /// Deletes everything in the directory except, with `keepingLock`, the lock file,
    /// recursing into folders without following symbolic links. Errors on single files are
    /// ignored: what cannot be deleted is overwritten or swept later.
    func empty(keepingLock: Bool) {
        removeContents(of: path, keepingLock: keepingLock)
    }

    private func removeContents(of folder: String, keepingLock: Bool) {
        guard let names = try? fileSystem.contentsOfDirectory(folder) else { return }
        for name in names {
            if keepingLock && folder == path && name == Self.lockFileName { continue }
            let child = folder + "/" + name
            if (try? fileSystem.kind(of: child)) == .directory {
                removeContents(of: child, keepingLock: false)
                try? fileSystem.rmdir(child)
            } else {
                try? fileSystem.unlink(child)
            }
        }
    }

    /// Leaves the marker that tells the next open no stray file exists. Best effort: without
    /// it, the next open sweeps the directory, which is only slower.
    func leaveCleanMarker() {
        guard let fd = try? fileSystem.open(cleanMarkerPath, flags: OpenFlags.createTruncate, mode: FileModes.file)
        else { return }
        try? fileSystem.close(fd)
    }

    /// Flushes the directory itself, so that renames and creations in it survive a power loss.
    func sync() throws(SystemCallError) {
        let fd = try fileSystem.open(path, flags: OpenFlags.directory, mode: 0)
        defer { try? fileSystem.close(fd) }
        try fileSystem.fsync(fd)
    }

    /// Whether the directory itself still exists (something may delete it underneath the cache).
    func exists() throws(CacheError) -> Bool {
        do {
            return try fileSystem.kind(of: path) != nil
        } catch {
            throw CacheError.ioFailure(error, operation: "restore directory", path: path)
        }
    }
}
