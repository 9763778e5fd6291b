/// The locks of a directory that several caches write (``DiskLRUCache/Sharing/processes``),
/// each on a descriptor of its own, so that they exclude each other whether the caches are in
/// one process or several:
///
/// - `journal.lock`, held *shared* for as long as the cache is open: a single-process writer
///   (``DirectoryLock``, of any release) takes it exclusively, so neither kind opens while the
///   other has the directory. An open takes it exclusively first, to learn whether it is the
///   only cache open (then it may repair and sweep as a single writer does).
/// - `journal.share`, held for one operation: *shared* by a set that only appends its line
///   (any number of them at once, each line one `write` with `O_APPEND`), *exclusively* by
///   every other change and every open, which read what the others journaled, write, and
///   release it before returning.
///
/// Both are `flock(2)` locks: the system drops them when a process dies, whatever it was doing.
struct SharedDirectoryLock: Sendable {
    /// `journal.lock`.
    let openFD: Int32
    /// `journal.share`.
    let operationFD: Int32
    /// `journal.share`'s first page, mapped (``SharedPage``; its words: ``Word``); `nil` where
    /// it cannot be mapped.
    let page: SharedPage?

    /// The words of `journal.share`'s first page. Each is written under the operation lock;
    /// ``changeCount`` is read without it too.
    enum Word: Int {
        /// How many holds journaled something: a read that finds the count it last saw has
        /// nothing to catch up with.
        case changeCount = 0
        /// Where the journal's last whole line ends, as the last holder left it.
        case journalEnd = 1
        /// How many times a cache rebuilt the journal (renamed a new one over it).
        case journalReplacements = 2
        /// Not 0 from the moment a holder may write until it has left the other words right:
        /// found set by the next holder, the last one died holding the lock (its appends may be
        /// torn), and the journal itself is looked at.
        case holderAtWork = 3
        /// The version of this protocol (the words and what they mean) the caches that have the
        /// directory open follow: set by the cache that opens it alone, checked by the others.
        case protocolVersion = 4
        /// How many holders of the shared lock are appending: found above 0 by a holder of the
        /// exclusive lock, one died appending (its line may be torn, or past ``journalEnd``),
        /// and the journal itself is looked at.
        case sharedAppenders = 5
    }

    /// The version of the protocol this release follows (``Word/protocolVersion``). Version 2
    /// lets sets append under the shared lock, so a torn line may be followed by whole ones:
    /// caches of version 1 would take the pair for damage, and are refused beside these.
    static let protocolVersion: UInt64 = 2

    /// What the last holder of the operation lock left in the page, read by the next holder;
    /// `nil` when there is no page or it did not leave it in order (it died holding the lock).
    struct Handover: Equatable {
        var changeCount: UInt64
        var journalEnd: Int64
        var journalReplacements: UInt64
    }

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
            openFD: openFD, operationFD: operationFD, page: SharedPage(fd: operationFD))
        do {
            try lock.lockOperation(in: directory)
        } catch {
            lock.release(using: fileSystem)
            throw error
        }
        do {
            try fileSystem.advisoryLock(openFD, .exclusive)
            lock.page?.store(Self.protocolVersion, at: Word.protocolVersion.rawValue)
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
                break
            } catch  where error.errno == Errno.wouldBlock && attempts < 100 {
                attempts += 1
                DirectoryLock.pause()
            } catch {
                lock.release(using: fileSystem)
                if error.errno == Errno.wouldBlock { throw CacheError.directoryLocked(directory.path, cause: error) }
                throw CacheError.ioFailure(error, operation: .lockingDirectory, path: directory.lockPath)
            }
        }
        // Beside caches of another protocol (another release, which may not leave the journal's
        // end in the page): refused, as beside a single writer.
        if let page = lock.page, page.load(Word.protocolVersion.rawValue) != Self.protocolVersion {
            lock.release(using: fileSystem)
            throw CacheError.sharedProtocolMismatch(directory.path)
        }
        return (lock, false)
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
    func lockOperation(in directory: CacheDirectory, shared: Bool = false) throws(CacheError) {
        let fileSystem = directory.fileSystem
        let clock = ContinuousClock()
        var deadline: ContinuousClock.Instant?
        var attempts = 0
        while true {
            do {
                try fileSystem.advisoryLock(operationFD, shared ? .shared : .exclusive)
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
                if let deadline, now > deadline {
                    throw CacheError.sharedOperationTimedOut(directory.path, waited: Self.longestWait, cause: error)
                }
                if deadline == nil { deadline = now.advanced(by: Self.longestWait) }
                ProcessPause.sleep(microseconds: attempts < 256 ? 50 : 1_000)
            } catch {
                throw CacheError.ioFailure(error, operation: .lockingDirectory, path: directory.operationLockPath)
            }
        }
    }

    /// What the last holder left in the page; call with the operation lock held.
    ///
    /// - Complexity: four loads, no system call.
    func handover() -> Handover? {
        guard let page, page.load(Word.holderAtWork.rawValue) == 0, page.load(Word.sharedAppenders.rawValue) == 0
        else { return nil }
        let end = page.load(Word.journalEnd.rawValue)
        guard end > 0, end <= UInt64(Int64.max) else { return nil }
        return Handover(
            changeCount: page.load(Word.changeCount.rawValue), journalEnd: Int64(end),
            journalReplacements: page.load(Word.journalReplacements.rawValue))
    }

    /// Notes, with the operation lock held, that this holder may write from now on: until
    /// ``leave(journalEnd:journaled:replacedJournal:)``, a holder that finds the mark knows
    /// this one died holding the lock.
    func markAtWork() {
        page?.store(1, at: Word.holderAtWork.rawValue)
    }

    /// Leaves the page right for the next holder, just before the operation lock is released:
    /// where the journal ends (`nil` when this hold cannot tell: the mark is set, and the next
    /// holder looks at the journal itself), whether this hold journaled something or rebuilt
    /// the journal. Returns the count of changes and of rebuilds as left.
    func leave(journalEnd: Int64?, journaled: Bool, replacedJournal: Bool) -> (
        changeCount: UInt64, replacements: UInt64
    )? {
        guard let page else { return nil }
        let replacements =
            replacedJournal
            ? page.increment(Word.journalReplacements.rawValue) : page.load(Word.journalReplacements.rawValue)
        if let journalEnd, journalEnd > 0 { page.store(UInt64(journalEnd), at: Word.journalEnd.rawValue) }
        let count =
            journaled || replacedJournal
            ? page.increment(Word.changeCount.rawValue) : page.load(Word.changeCount.rawValue)
        page.store(journalEnd.map { $0 > 0 ? 0 : 1 } ?? 1, at: Word.holderAtWork.rawValue)
        return (count, replacements)
    }

    /// With the operation lock held exclusively: when the last exclusive holder died inside
    /// it (its mark is still set), it may have renamed a rebuilt journal over the old one
    /// before counting the rebuild, so a rebuild is counted now: every cache that follows the
    /// old file then looks at the journal before it appends under the shared lock. Returns
    /// whether the mark was set.
    @discardableResult
    func countRebuildOfDeadHolder() -> Bool {
        guard let page, page.load(Word.holderAtWork.rawValue) != 0 else { return false }
        page.increment(Word.journalReplacements.rawValue)
        return true
    }

    /// With the operation lock held exclusively, after the journal itself was looked at: no
    /// appender is left (one counted died appending).
    func forgetDeadAppenders() {
        guard let page, page.load(Word.sharedAppenders.rawValue) != 0 else { return }
        page.store(0, at: Word.sharedAppenders.rawValue)
    }

    /// With the operation lock held shared: counts this holder among the appenders, when the
    /// journal is still the one this cache follows (rebuilt `replacements` times) and the last
    /// exclusive holder left in order. `false` (not counted) when the append must take the lock
    /// exclusively.
    func admitAppender(replacements: UInt64?) -> Bool {
        guard let page, let replacements, page.load(Word.holderAtWork.rawValue) == 0,
            page.load(Word.journalReplacements.rawValue) == replacements
        else { return false }
        page.increment(Word.sharedAppenders.rawValue)
        return true
    }

    /// An appender leaves, with the shared lock still held: the journal's end raised to where
    /// its line ended (`nil` when its append failed: the at-work mark is set, so that the next
    /// exclusive holder looks at the journal itself), the count of changes moved.
    func leaveAppending(journalEnd: Int64?) {
        guard let page else { return }
        if let journalEnd, journalEnd > 0 {
            page.raise(Word.journalEnd.rawValue, to: UInt64(journalEnd))
            page.increment(Word.changeCount.rawValue)
        } else {
            page.store(1, at: Word.holderAtWork.rawValue)
        }
        page.decrement(Word.sharedAppenders.rawValue)
    }

    /// The count of changes journaled, read without the lock; `nil` without a page.
    var changeCount: UInt64? { page?.load(Word.changeCount.rawValue) }

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
