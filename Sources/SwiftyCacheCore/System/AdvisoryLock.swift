/// The kinds of advisory lock (`flock(2)`) a descriptor may hold on its file. Locks of
/// different open file descriptions conflict, in one process as across processes; a
/// descriptor asking for another kind converts its own lock (not atomically: the old one is
/// dropped first).
package enum AdvisoryLock: Sendable {
    /// Conflicts with every other lock: `LOCK_EX`.
    case exclusive
    /// Conflicts only with an exclusive lock: `LOCK_SH`.
    case shared
    /// Drops the descriptor's lock: `LOCK_UN`.
    case unlocked
}
