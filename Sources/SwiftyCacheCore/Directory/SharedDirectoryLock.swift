/// The locks of a directory that several caches write (``DiskLRUCache/Sharing/processes``),
/// each on a descriptor of its own, so that they exclude each other whether the caches are in
/// one process or several:
///
/// - `journal.lock`, held *shared* for as long as the cache is open: a single-process writer
///   (``DirectoryLock``, of any release) takes it exclusively, so neither kind opens while the
///   other has the directory. An open takes it exclusively first, to learn whether it is the
///   only cache open (then it may repair and sweep as a single writer does).
/// - `journal.share`, held *exclusively* for one operation: every open and every change takes
///   it, reads what the others journaled, writes, and releases it before returning.
///
/// Both are `flock(2)` locks: the system drops them when a process dies, whatever it was doing.
struct SharedDirectoryLock: Sendable {
    /// `journal.lock`.
    let openFD: Int32
    /// `journal.share`.
    let operationFD: Int32
    /// The count of changes journaled, in `journal.share`'s first page (``SharedCounter``);
    /// `nil` where it cannot be mapped.
    let changeCount: SharedCounter?

    /// How long an operation waits for the others before it throws
    /// ``CacheError/Code/directoryLocked``: a process stopped while it holds the lock (in a
    /// debugger) must not hang this one. No operation holds it that long otherwise.
    static let longestWait: Duration = .seconds(30)

    /// Opens both lock files, takes the operation lock (waiting for the others' operations),
    /// then the open lock: exclusively when no other cache has the directory open (`isAlone`),
    /// shared otherwise. Returns with the operation lock held; call
    /// ``finishOpening(isAlone:using:)`` and ``unlockOperation(using:)`` after recovery.
    ///
    /// - Throws: ``CacheError/Code/directoryLocked`` when a single-process writer has the
    ///   directory open, or an operation of another cache held it for ``longestWait``;
    ///   ``CacheError/Code/ioFailure``.
    static func acquire(in directory: CacheDirectory) throws(CacheError) -> (lock: Self, isAlone: Bool) {
        let fileSystem = directory.fileSystem
        let openFD: Int32
        let operationFD: Int32
        do {
            openFD = try fileSystem.open(directory.lockPath, flags: OpenFlags.lockFile, mode: FileModes.file)
        } catch {
            throw CacheError.ioFailure(error, operation: .lockingDirectory, path: directory.lockPath)
        }
        do {
            operationFD = try fileSystem.open(
                directory.operationLockPath, flags: OpenFlags.lockFile, mode: FileModes.file)
        } catch {
            try? fileSystem.close(openFD)
            throw CacheError.ioFailure(error, operation: .lockingDirectory, path: directory.operationLockPath)
        }
        let lock = SharedDirectoryLock(
            openFD: openFD, operationFD: operationFD, changeCount: SharedCounter(fd: operationFD))
        do {
            try lock.lockOperation(in: directory)
        } catch {
            lock.release(using: fileSystem)
            throw error
        }
        do {
            try fileSystem.advisoryLock(openFD, .exclusive)
            return (lock, true)
        } catch  where error.errno == Errno.wouldBlock {
            // Another cache has it open: shared with other sharing caches, or exclusively by a
            // single writer, which never waits for the operation lock (a few tries, as
            // ``CacheDirectory/acquireLock()`` makes: it may be closing).
        } catch {
            lock.release(using: fileSystem)
            throw CacheError.ioFailure(error, operation: .lockingDirectory, path: directory.lockPath)
        }
        var attempts = 0
        while true {
            do {
                try fileSystem.advisoryLock(openFD, .shared)
                return (lock, false)
            } catch  where error.errno == Errno.wouldBlock && attempts < 100 {
                attempts += 1
                DirectoryLock.pause()
            } catch {
                lock.release(using: fileSystem)
                if error.errno == Errno.wouldBlock { throw CacheError.directoryLocked(directory.path, cause: error) }
                throw CacheError.ioFailure(error, operation: .lockingDirectory, path: directory.lockPath)
            }
        }
    }

    /// After the open of a cache that was alone: the open lock becomes shared, so that other
    /// sharing caches may open. The conversion drops the lock for an instant; a single writer
    /// that took it then makes this throw ``CacheError/Code/directoryLocked`` (it opened what
    /// this open left consistent, and nothing was written since).
    func finishOpening(isAlone: Bool, in directory: CacheDirectory) throws(CacheError) {
        guard isAlone else { return }
        do {
            try directory.fileSystem.advisoryLock(openFD, .shared)
        } catch  where error.errno == Errno.wouldBlock {
            throw CacheError.directoryLocked(directory.path, cause: error)
        } catch {
            throw CacheError.ioFailure(error, operation: .lockingDirectory, path: directory.lockPath)
        }
    }

    /// Takes the operation lock, waiting while another cache's operation holds it: first
    /// yielding the core (an operation takes microseconds), then in short pauses, then in
    /// pauses of a millisecond, up to ``longestWait``.
    ///
    /// - Throws: ``CacheError/Code/directoryLocked`` after ``longestWait``,
    ///   ``CacheError/Code/ioFailure``.
    func lockOperation(in directory: CacheDirectory) throws(CacheError) {
        let fileSystem = directory.fileSystem
        let clock = ContinuousClock()
        var deadline: ContinuousClock.Instant?
        var attempts = 0
        while true {
            do {
                try fileSystem.advisoryLock(operationFD, .exclusive)
                return
            } catch  where error.errno == Errno.wouldBlock {
                attempts += 1
                // An operation takes microseconds: yield the core to its holder first, then
                // pause, longer once it is clearly a long one (a rebuild).
                guard attempts > 64 else {
                    ProcessPause.yield()
                    continue
                }
                let now = clock.now
                if let deadline, now > deadline { throw CacheError.directoryLocked(directory.path, cause: error) }
                if deadline == nil { deadline = now.advanced(by: Self.longestWait) }
                ProcessPause.sleep(microseconds: attempts < 256 ? 50 : 1_000)
            } catch {
                throw CacheError.ioFailure(error, operation: .lockingDirectory, path: directory.operationLockPath)
            }
        }
    }

    /// Releases the operation lock.
    func unlockOperation(using fileSystem: any FileSystem) {
        try? fileSystem.advisoryLock(operationFD, .unlocked)
    }

    /// Closes both descriptors, which drops both locks.
    func release(using fileSystem: any FileSystem) {
        try? fileSystem.close(operationFD)
        try? fileSystem.close(openFD)
    }
}
