#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Set when the awaiting task is cancelled, read by the job before it starts.
/// The outcome of one offloaded job, handed from the pool's thread to the awaiting task under
/// a mutex, with the flag that keeps a cancelled job from starting.
final class Handoff<T: Sendable>: Sendable {
    private struct State {
        var isCancelled = false
        var result: Result<T, any Error>?
    }

    private let state = LockedState(State())

    /// Marks the job cancelled; a job that has not started yet will not run.
    func cancel() { state.withLock { $0.isCancelled = true } }

    /// Whether the job may run: `false` once cancelled.
    func start() -> Bool { state.withLock { !$0.isCancelled } }

    /// Stores the job's outcome, before the continuation is resumed.
    func finish(_ result: Result<T, any Error>) { state.withLock { $0.result = result } }

    /// The stored outcome. The pool resumes the continuation only after ``finish(_:)``, so it
    /// is always there; were it not, the call reports a cancellation rather than trap.
    func takeResult() throws -> T {
        let result = state.withLock { state -> Result<T, any Error>? in
            defer { state.result = nil }
            return state.result
        }
        guard let result else {
            assertionFailure("an offloaded job resumed its task without a result")
            throw CancellationError()
        }
        return try result.get()
    }
}
