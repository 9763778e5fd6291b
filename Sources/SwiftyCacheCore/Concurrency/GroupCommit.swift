/// Commits from several threads that share one sync, as LevelDB's writer queue and SQLite's
/// group commit do: a thread that submits while no group is running leads the next group,
/// taking every submission queued meanwhile and running them at once (one append, one sync);
/// the others wait for their outcome. While a group's sync runs, new submissions queue, and
/// the next leader covers them all with the next sync. Every caller returns its own outcome
/// once the group that took it has finished.
///
/// One group at a time means the callers of a running group cannot be in the next: with four
/// writers, groups would alternate between two and two. So a new leader first waits, a short
/// while, for as many members as were active around the last group (its members and those
/// that queued while it ran), at most half the last group's run (its sync, mostly)
/// and never more than ``longestGathering``; a lone writer waits for nobody. The writers of
/// the last group, back with their next commit, then join the same group as the others.
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
        /// How many members the next group waits for: those active around the last group.
        var expected = 1
        /// How long the last group's run took.
        var lastRunNanoseconds: UInt64 = 0
        /// Whether a leader is waiting for members (a submission then wakes it).
        var isGathering = false
    }

    /// The longest a leader waits for members.
    static var longestGathering: UInt64 { 500_000 }

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
        if queue.value.isGathering && queue.value.pending.count >= queue.value.expected { queue.broadcast() }
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
            gatherMembers()
            let group = queue.value.pending
            queue.value.pending.removeAll(keepingCapacity: true)
            queue.unlock()
            let start = ConditionLock<Queue>.monotonicNanoseconds()
            let outcomes = run(group.map(\.member))
            let end = ConditionLock<Queue>.monotonicNanoseconds()
            queue.lock()
            queue.value.lastRunNanoseconds = end &- start
            // Active around this group: its members and those that queued meanwhile.
            queue.value.expected = max(1, group.count + queue.value.pending.count)
            for (index, entry) in group.enumerated() where index < outcomes.count {
                queue.value.outcomes[entry.ticket] = outcomes[index]
            }
            queue.value.isRunning = false
            queue.broadcast()
        }
    }

    /// Waits, holding the queue's lock as a leader, until the members expected have queued or
    /// the gathering time is over.
    private func gatherMembers() {
        guard queue.value.pending.count < queue.value.expected else { return }
        let window = min(Self.longestGathering, queue.value.lastRunNanoseconds / 2)
        let deadline = ConditionLock<Queue>.monotonicNanoseconds() &+ window
        queue.value.isGathering = true
        while queue.value.pending.count < queue.value.expected {
            let now = ConditionLock<Queue>.monotonicNanoseconds()
            guard now < deadline else { break }
            queue.wait(nanoseconds: Int(deadline - now))
        }
        queue.value.isGathering = false
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
