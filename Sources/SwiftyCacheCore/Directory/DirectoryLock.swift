/// The exclusive hold a cache has on its directory: an `flock` on `journal.lock`, plus an entry
/// in a process-wide registry so a second cache of this process fails at once, whatever path
/// it names the directory by.
struct DirectoryLock: Sendable {
    let fd: Int32
    let identity: FileIdentity

    private static let registry = LockedState<Set<FileIdentity>>([])

    /// Claims `identity` for this process; `false` if a cache of this process holds it.
    static func register(_ identity: FileIdentity) -> Bool {
        registry.withLock { $0.insert(identity).inserted }
    }

    static func unregister(_ identity: FileIdentity) {
        _ = registry.withLock { $0.remove(identity) }
    }

    /// One millisecond between attempts at another process's lock.
    static func pause() {
        ProcessPause.sleep(microseconds: 1_000)
    }

    /// Releases the lock: closing the descriptor drops the `flock`.
    func release(using fileSystem: any FileSystem) {
        Self.unregister(identity)
        try? fileSystem.close(fd)
    }
}
