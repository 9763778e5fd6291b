/// The bound on a test that waits for asynchronous changes, so that a change that never comes
/// fails the test instead of hanging it.
///
/// It counts its own one-second sleeps rather than the wall clock. The waiting task and the
/// watchdog share the cooperative pool, which the full suite's long synchronous tests can hold
/// for minutes on this two-core machine: a wall-clock bound then expired while the waiting task
/// had had no thread to run on, and failed a test that nothing was wrong with. Held up the same
/// way, this one expires only after `seconds` of time in which the task could have run.
public enum Watchdog {
    /// Sleeps `seconds` one-second steps, then returns `true`; `false` if cancelled before.
    public static func expire(after seconds: Int = 120) async -> Bool {
        for _ in 0..<seconds {
            try? await Task.sleep(for: .seconds(1))
            if Task.isCancelled { return false }
        }
        return true
    }

    /// A task that runs `expire` after ``expire(after:)``; cancel it when the wait is over.
    public static func start(seconds: Int = 120, _ expire: @escaping @Sendable () -> Void) -> Task<Void, Never> {
        Task {
            if await Self.expire(after: seconds) { expire() }
        }
    }

    /// The value of a consuming task, which is cancelled (ending its loop) if it has not
    /// finished within `seconds`: a failure then shows as wrong figures, never as a hang.
    public static func boundedValue<T: Sendable>(of consumer: Task<T, Never>, seconds: Int = 120) async -> T {
        let watchdog = start(seconds: seconds) { consumer.cancel() }
        defer { watchdog.cancel() }
        return await consumer.value
    }
}
