#if canImport(Darwin)
public import Darwin
#elseif canImport(Glibc)
@preconcurrency public import Glibc
#elseif canImport(Musl)
@preconcurrency public import Musl
#endif

/// A value guarded by a `pthread_mutex_t`: the package's one lock.
///
/// `Synchronization.Mutex` would do, but on Linux it synchronizes through futexes that
/// ThreadSanitizer cannot see, so every access under it is reported as a race; a pthread mutex
/// keeps the sanitizer's verdicts meaningful (docs/RELIABILITY.md), and lowers the Apple
/// platform floor as a bonus.
///
/// - Complexity: `withLock` costs one uncontended lock and unlock, about 20 ns.
@usableFromInline
package final class LockedState<State>: @unchecked Sendable {
    // @unchecked Sendable is sound: `state` is read and written only inside `withLock`, between
    // pthread_mutex_lock and pthread_mutex_unlock on `mutex`, which is allocated once, never
    // moved (it lives behind a pointer, not in the object's inline storage) and destroyed in
    // deinit when no other reference exists. `State` values cross threads only through that
    // critical section, so `State` itself need not be Sendable for this class to be.
    @usableFromInline let mutex: UnsafeMutablePointer<pthread_mutex_t>
    @usableFromInline var state: State

    @inlinable
    package init(_ state: State) {
        self.state = state
        mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
        mutex.initialize(to: pthread_mutex_t())
        // Default attributes: cannot fail.
        pthread_mutex_init(mutex, nil)
    }

    deinit {
        pthread_mutex_destroy(mutex)
        mutex.deallocate()
    }

    /// Runs `body` with exclusive access to the state.
    @inlinable
    package func withLock<Result, Failure: Error>(_ body: (inout State) throws(Failure) -> Result) throws(Failure) -> Result {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return try body(&state)
    }
}
