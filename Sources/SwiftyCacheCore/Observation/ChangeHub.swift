import Synchronization

/// The subscribers to a cache's changes (the engine's, or an object cache's typed ones), and
/// their buffers: changes are recorded under the
/// cache lock, in commit order, into every subscriber's ``ChangeBuffer`` (no user code runs,
/// nothing waits); a subscriber whose consumer is waiting is then resumed by
/// ``deliverReady()``, which the cache calls after releasing its lock. So no consumer ever runs
/// while the cache lock is held (one that calls back into the cache cannot deadlock), and a
/// writer never waits for a consumer.
///
/// Lock order: the cache lock, then this hub's; never the other way round (a consumer's
/// `next()` takes only this one).
package final class ChangeHub<Change: ObservedChange>: Sendable {
    private struct Subscriber {
        let id: UInt64
        var buffer: ChangeBuffer<Change>
        /// The consumer's `next()`, waiting for a change.
        var waiter: CheckedContinuation<Change?, Never>?
        /// Whether it is in ``State/ready``.
        var isReady = false
        /// The one key it wants changes of (and changes of every key); `nil` for all.
        let filter: Change.Key?
    }

    private struct State {
        var subscribers: [Subscriber] = []
        var nextID: UInt64 = 1
        /// Subscribers with a waiting consumer and a change for it.
        var ready: [UInt64] = []
        var isFinished = false

        func index(of id: UInt64) -> Int? { subscribers.firstIndex { $0.id == id } }
    }

    /// A layer above that sees every change as it is recorded (under the cache lock: it must
    /// not block or call out), and is told when the lock is released.
    package struct Tap: Sendable {
        package let record: @Sendable (Change) -> Void
        package let afterUnlock: @Sendable () -> Void

        package init(record: @escaping @Sendable (Change) -> Void, afterUnlock: @escaping @Sendable () -> Void) {
            self.record = record
            self.afterUnlock = afterUnlock
        }
    }

    private let state = LockedState(State())
    private let subscriberCount = Atomic<Int>(0)
    private let readyCount = Atomic<Int>(0)
    private let tapSlot = TapSlot()
    private let hasTap = Atomic<Bool>(false)
    private let tapClaimed = Atomic<Bool>(false)

    /// Where the tap is kept. Sendable without a lock because it is written once, before
    /// `hasTap` is stored `true` with releasing order, and read only after `hasTap` is loaded
    /// `true` with acquiring order: the write happens before every read, and `tapClaimed`
    /// ensures there is no second write.
    private final class TapSlot: @unchecked Sendable {
        var tap: Tap?
    }

    package init() {}

    /// Whether anyone is subscribed, or a tap installed: otherwise recording costs one atomic
    /// load.
    package var isObserved: Bool { subscriberCount.load(ordering: .relaxed) > 0 || hasTap.load(ordering: .relaxed) }

    /// Installs the tap of the layer above (the object cache's typed changes), once: a second
    /// tap is ignored.
    package func install(_ newTap: Tap) {
        guard !tapClaimed.exchange(true, ordering: .relaxed) else { return }
        tapSlot.tap = newTap
        hasTap.store(true, ordering: .releasing)
    }

    private var installedTap: Tap? { hasTap.load(ordering: .acquiring) ? tapSlot.tap : nil }

    /// Records a change for every subscriber. Called under the cache lock.
    ///
    /// - Complexity: O(subscribers), amortized O(1) each.
    package func record(_ change: Change) {
        guard isObserved else { return }
        installedTap?.record(change)
        guard subscriberCount.load(ordering: .relaxed) > 0 else { return }
        state.withLock { state in
            for index in state.subscribers.indices {
                if let filter = state.subscribers[index].filter, let key = change.changedKey, key != filter { continue }
                state.subscribers[index].buffer.append(change)
                if state.subscribers[index].waiter != nil, !state.subscribers[index].isReady {
                    state.subscribers[index].isReady = true
                    state.ready.append(state.subscribers[index].id)
                }
            }
            readyCount.store(state.ready.count, ordering: .relaxed)
        }
    }

    /// Resumes the consumers waiting for the changes recorded. Called with the cache lock
    /// released; one atomic load when nothing is ready.
    package func deliverReady() {
        // The flag first: a hub without a tap (an object cache's own) forms no optional of its
        // generic `Tap`, which unspecialized code would look up at every call.
        if hasTap.load(ordering: .relaxed) { installedTap?.afterUnlock() }
        guard readyCount.load(ordering: .relaxed) > 0 else { return }
        resumeReady()
    }

    /// The work of ``deliverReady()`` when a consumer has a change: out of line, so that the
    /// check before it touches no generic type.
    @inline(never)
    private func resumeReady() {
        let deliveries = state.withLock { state -> [(CheckedContinuation<Change?, Never>, Change)] in
            var deliveries: [(CheckedContinuation<Change?, Never>, Change)] = []
            for id in state.ready {
                guard let index = state.index(of: id) else { continue }
                state.subscribers[index].isReady = false
                guard let waiter = state.subscribers[index].waiter,
                    let change = state.subscribers[index].buffer.popFirst()
                else { continue }
                state.subscribers[index].waiter = nil
                deliveries.append((waiter, change))
            }
            state.ready.removeAll(keepingCapacity: true)
            readyCount.store(0, ordering: .relaxed)
            return deliveries
        }
        for (waiter, change) in deliveries { waiter.resume(returning: change) }
    }

    /// A new subscriber, buffering at most `keyLimit` keys, of changes of `filter` (and of every
    /// key) only, or of all keys.
    package func subscribe(keyLimit: Int, filter: Change.Key? = nil) -> UInt64 {
        state.withLock { state in
            let id = state.nextID
            state.nextID += 1
            if !state.isFinished {
                state.subscribers.append(Subscriber(id: id, buffer: ChangeBuffer(keyLimit: keyLimit), filter: filter))
                subscriberCount.add(1, ordering: .relaxed)
            }
            return id
        }
    }

    /// The next change for subscriber `id`; `nil` once it is cancelled or the cache closed and
    /// its buffer emptied. Cancelling the waiting task ends the subscription at once.
    package func next(_ id: UInt64) async -> Change? {
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Change?, Never>) in
                let immediate = state.withLock { state -> Change?? in
                    guard let index = state.index(of: id) else { return .some(nil) }
                    if let change = state.subscribers[index].buffer.popFirst() { return .some(change) }
                    // Finished, or a second consumer of one subscription: nothing to wait for.
                    if state.isFinished || state.subscribers[index].waiter != nil { return .some(nil) }
                    state.subscribers[index].waiter = continuation
                    return .none
                }
                if let immediate { continuation.resume(returning: immediate) }
            }
        } onCancel: {
            unsubscribe(id)
        }
    }

    /// Ends subscriber `id` and frees its buffer; a waiting consumer gets `nil`.
    package func unsubscribe(_ id: UInt64) {
        let waiter = state.withLock { state -> CheckedContinuation<Change?, Never>? in
            guard let index = state.index(of: id) else { return nil }
            let waiter = state.subscribers[index].waiter
            state.subscribers.remove(at: index)
            subscriberCount.subtract(1, ordering: .relaxed)
            return waiter
        }
        waiter?.resume(returning: nil)
    }

    /// Ends every subscription when the cache closes: each consumer gets what its buffer holds,
    /// then `nil`.
    package func finish() {
        let waiters = state.withLock { state -> [CheckedContinuation<Change?, Never>] in
            state.isFinished = true
            var waiters: [CheckedContinuation<Change?, Never>] = []
            for index in state.subscribers.indices {
                if let waiter = state.subscribers[index].waiter { waiters.append(waiter) }
                state.subscribers[index].waiter = nil
            }
            return waiters
        }
        for waiter in waiters { waiter.resume(returning: nil) }
    }

    /// What subscriber `id` holds, for the tests of the buffer's bound.
    package func bufferedCount(of id: UInt64) -> (keys: Int, stored: Int)? {
        state.withLock { state in
            state.index(of: id).map {
                (state.subscribers[$0].buffer.pendingKeyCount, state.subscribers[$0].buffer.storedCount)
            }
        }
    }
}

extension ChangeHub where Change == CacheChange {
    /// Records an engine change, built only if someone subscribed. Called under the cache lock.
    func record(key: String?, kind: CacheChange.Kind) {
        guard isObserved else { return }
        record(CacheChange(key: key, kind: kind))
    }
}
