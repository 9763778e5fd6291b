/// Commits from several threads that share one sync, as LevelDB's writer queue and SQLite's
/// group commit do: a thread that submits while no group is running leads the next group,
/// taking every submission queued meanwhile and running them at once (one append, one sync);
/// the others wait for their outcome. While a group's sync runs, new submissions queue, and
/// the next leader covers them all with the next sync. Every caller returns its own outcome
/// once the group that took it has finished.
///
/// ``exclusive(_:)`` runs work that must not overlap a group (compaction's copies, a close):
/// it waits for the running group to finish and keeps the next one from starting meanwhile.
///
/// No lock of the cache is held while a submission waits; the queue's own mutex is held only
/// to queue, to hand over a group and to post outcomes.
final class GroupCommit<Member: Sendable, Outcome: Sendable>: Sendable {
    private struct Queue {
        var pending: [(ticket: UInt64, member: Member)] = []
        var outcomes: [UInt64: Outcome] = [:]
        var isRunning = false
        var nextTicket: UInt64 = 0
    }

    private let queue = ConditionLock(Queue())

    /// Submissions waiting for a group to take them (for tests: what the next group holds).
    var queuedCount: Int { queue.withLock { $0.pending.count } }

    /// Runs `member` in a group: the caller leads it (and calls `run` with every member queued,
    /// its own among them, returning their outcomes in order) or waits for a leader to.
    ///
    /// - Complexity: one `run` per group; O(members) to hand a group over.
    func submit(_ member: Member, run: ([Member]) -> [Outcome]) -> Outcome {
        queue.lock()
        let ticket = queue.value.nextTicket
        queue.value.nextTicket &+= 1
        queue.value.pending.append((ticket, member))
        while true {
            if let outcome = queue.value.outcomes.removeValue(forKey: ticket) {
                queue.unlock()
                return outcome
            }
            guard !queue.value.isRunning else {
                queue.wait()
                continue
            }
            queue.value.isRunning = true
            let group = queue.value.pending
            queue.value.pending.removeAll(keepingCapacity: true)
            queue.unlock()
            let outcomes = run(group.map(\.member))
            queue.lock()
            for (index, entry) in group.enumerated() where index < outcomes.count {
                queue.value.outcomes[entry.ticket] = outcomes[index]
            }
            queue.value.isRunning = false
            queue.broadcast()
        }
    }

    /// Runs `body` while no group runs.
    func exclusive<T, Failure: Error>(_ body: () throws(Failure) -> T) throws(Failure) -> T {
        queue.lock()
        while queue.value.isRunning { queue.wait() }
        queue.value.isRunning = true
        queue.unlock()
        defer {
            queue.lock()
            queue.value.isRunning = false
            queue.broadcast()
            queue.unlock()
        }
        return try body()
    }
}
