/// The changes waiting for one subscriber: at most one per key, the latest (a consumer may miss
/// a key's intermediate versions, never its final state), in the order of their last change,
/// and at most `keyLimit` keys; past that, one ``ObservedChange/overflow`` change stands for
/// everything dropped.
///
/// Memory: O(`keyLimit`) however many changes arrive (the queue is compacted when stale
/// entries outnumber live ones).
package struct ChangeBuffer<Change: ObservedChange> {
    private struct Pending {
        let change: Change
        let serial: UInt64
    }

    /// Pending changes from `head` on; those superseded by a later change of their key are
    /// stale and skipped.
    private var queue: [Pending] = []
    private var head = 0
    /// The serial of each key's latest pending change.
    private var latest: [Change.Key: UInt64] = [:]
    private var nextSerial: UInt64 = 0
    package let keyLimit: Int

    package init(keyLimit: Int) {
        self.keyLimit = max(1, keyLimit)
    }

    package var isEmpty: Bool { head == queue.count }

    /// The number of keys with a pending change.
    package var pendingKeyCount: Int { latest.count }

    /// The entries the queue holds, stale ones included (for the tests of its bound).
    package var storedCount: Int { queue.count - head }

    /// Adds a change. A change of every key (`key == nil`) supersedes everything pending.
    ///
    /// - Complexity: O(1) amortized.
    package mutating func append(_ change: Change) {
        guard let key = change.changedKey else {
            reset(to: change)
            return
        }
        if latest[key] == nil, latest.count >= keyLimit {
            reset(to: Change.overflow)
            return
        }
        nextSerial &+= 1
        queue.append(Pending(change: change, serial: nextSerial))
        latest[key] = nextSerial
        if storedCount > 2 * max(latest.count, 32) { compact() }
    }

    /// The oldest pending change, removed.
    ///
    /// - Complexity: O(1) amortized.
    package mutating func popFirst() -> Change? {
        while head < queue.count {
            let pending = queue[head]
            head += 1
            if let key = pending.change.changedKey {
                guard latest[key] == pending.serial else { continue }
                latest[key] = nil
            }
            if head > 64, head * 2 > queue.count { compact() }
            return pending.change
        }
        return nil
    }

    /// Everything dropped for `change` (of every key).
    private mutating func reset(to change: Change) {
        queue.removeAll(keepingCapacity: queue.capacity <= 4 * max(keyLimit, 32))
        head = 0
        latest.removeAll(keepingCapacity: true)
        nextSerial &+= 1
        queue.append(Pending(change: change, serial: nextSerial))
    }

    /// Keeps only the live pending changes, in order.
    private mutating func compact() {
        var live: [Pending] = []
        live.reserveCapacity(latest.count + 1)
        for pending in queue[head...] {
            if let key = pending.change.changedKey, latest[key] != pending.serial { continue }
            live.append(pending)
        }
        queue = live
        head = 0
    }
}
