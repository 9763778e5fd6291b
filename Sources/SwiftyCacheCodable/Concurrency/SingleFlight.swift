import SwiftyCacheCore

/// One run of an `async` operation per key, however many callers wait for it: the first caller
/// starts it, later ones join, and all get its result or its error.
///
/// A waiter that is cancelled leaves at once with `CancellationError`; the run goes on for the
/// others, and is cancelled only when its last waiter has left (unless it was started in the
/// background, with no waiter, which nobody cancels). A run that finishes removes itself, so
/// the next caller starts a new one.
///
/// Every continuation is resumed exactly once, outside the lock: by the run's end, or by its
/// waiter's cancellation, whichever takes it out of the table first.
package final class SingleFlight<Key: Hashable & Sendable, Value: Sendable>: Sendable {
    private struct Flight {
        var id: UInt64
        var task: Task<Void, Never>?
        var waiters: [UInt64: CheckedContinuation<Value, any Error>] = [:]
        /// Started with no waiter (a refresh in the background): never cancelled by waiters.
        var isBackground: Bool
    }

    private struct State {
        var flights: [Key: Flight] = [:]
        var lastID: UInt64 = 0

        mutating func nextID() -> UInt64 {
            lastID &+= 1
            return lastID
        }
    }

    private let state = LockedState(State())

    /// How a waiter joined: it found its task cancelled, joined a run, or started one.
    private enum Join {
        case cancelled, joined
        case started(UInt64)
    }

    /// Whether a run for `key` is in flight (the package's tests wait on it).
    package func isRunning(_ key: Key) -> Bool { state.withLock { $0.flights[key] != nil } }

    /// The callers waiting for the run for `key` (the package's tests wait on it).
    package func waiterCount(for key: Key) -> Int { state.withLock { $0.flights[key]?.waiters.count ?? 0 } }

    /// Waits for the run for `key`, starting it with `work` if none is in flight.
    ///
    /// - Throws: `work`'s error; `CancellationError` if the calling task is cancelled.
    func value(for key: Key, work: @escaping @Sendable () async throws -> Value) async throws -> Value {
        let waiter = state.withLock { $0.nextID() }
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Value, any Error>) in
                let join = state.withLock { state -> Join in
                    // The cancellation flag is set before the handler runs: either the handler
                    // finds this waiter in the table, or this finds the flag.
                    if Task.isCancelled { return .cancelled }
                    if var flight = state.flights[key] {
                        flight.waiters[waiter] = continuation
                        state.flights[key] = flight
                        return .joined
                    }
                    let id = state.nextID()
                    state.flights[key] = Flight(id: id, waiters: [waiter: continuation], isBackground: false)
                    return .started(id)
                }
                switch join {
                case .cancelled: continuation.resume(throwing: CancellationError())
                case .joined: break
                case .started(let id): launch(key, id: id, work: work)
                }
            }
        } onCancel: {
            leave(key, waiter: waiter)
        }
    }

    /// Starts a run for `key` in the background, with no waiter, unless one is in flight.
    func start(_ key: Key, work: @escaping @Sendable () async throws -> Value) {
        let id = state.withLock { state -> UInt64? in
            guard state.flights[key] == nil else { return nil }
            let id = state.nextID()
            state.flights[key] = Flight(id: id, isBackground: true)
            return id
        }
        if let id { launch(key, id: id, work: work) }
    }

    private func launch(_ key: Key, id: UInt64, work: @escaping @Sendable () async throws -> Value) {
        let task = Task {
            let result: Result<Value, any Error>
            do {
                result = .success(try await work())
            } catch {
                result = .failure(error)
            }
            finish(key, id: id, with: result)
        }
        let kept = state.withLock { state -> Bool in
            guard var flight = state.flights[key], flight.id == id else { return false }
            flight.task = task
            state.flights[key] = flight
            return true
        }
        // Every waiter left before the task was recorded: nobody wants it. (Finished already,
        // it ignores the call.)
        if !kept { task.cancel() }
    }

    private func finish(_ key: Key, id: UInt64, with result: Result<Value, any Error>) {
        let waiters = state.withLock { state -> [CheckedContinuation<Value, any Error>] in
            guard let flight = state.flights[key], flight.id == id else { return [] }
            state.flights[key] = nil
            return Array(flight.waiters.values)
        }
        for waiter in waiters { waiter.resume(with: result) }
    }

    private func leave(_ key: Key, waiter: UInt64) {
        let (continuation, abandoned) = state.withLock {
            state -> (CheckedContinuation<Value, any Error>?, Task<Void, Never>?) in
            guard var flight = state.flights[key], let continuation = flight.waiters.removeValue(forKey: waiter) else {
                return (nil, nil)
            }
            if flight.waiters.isEmpty, !flight.isBackground {
                state.flights[key] = nil
                return (continuation, flight.task)
            }
            state.flights[key] = flight
            return (continuation, nil)
        }
        continuation?.resume(throwing: CancellationError())
        abandoned?.cancel()
    }
}
