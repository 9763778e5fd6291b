#if canImport(Darwin)
public import Darwin
#elseif canImport(Glibc)
@preconcurrency public import Glibc
#elseif canImport(Musl)
@preconcurrency public import Musl
#endif

/// A value guarded by a `pthread_mutex_t`: the package's lock, except for state that many
/// threads read and few write (``ReadMostlyLock``, the memory tier's stripes).
///
/// `Synchronization.Mutex` would do, but on Linux it synchronizes through futexes that
/// ThreadSanitizer cannot see, so every access under it is reported as a race; a pthread mutex
/// keeps the sanitizer's verdicts meaningful (docs/RELIABILITY.md), and lowers the Apple
/// platform floor as a bonus. The mutex lives in the same allocation as the value
/// (`ManagedBuffer`), so creating a lock is one allocation.
///
/// - Complexity: `withLock` costs one uncontended lock and unlock, about 20 ns.
@usableFromInline
package struct LockedState<State>: @unchecked Sendable {
    // @unchecked Sendable is sound: the state is read and written only inside `withLock`,
    // between pthread_mutex_lock and pthread_mutex_unlock on the mutex, which is initialized
    // once in the storage's tail (never moved while the object lives) and destroyed in the
    // storage's deinit, when no reference is left (every copy of this struct holds `storage`,
    // so the pointers below never outlive it). `State` values cross threads only through
    // that critical section, so `State` itself need not be Sendable for this type to be.
    @usableFromInline let storage: LockStorage<State>
    // The storage's two parts, so that taking the lock touches no reference count: a retain of
    // the storage around every hold is a write to memory that every thread taking the lock
    // writes, and on two cores that cache line bounces on every hold. They stay valid while
    // `storage` lives: a ManagedBuffer never moves its header or elements.
    @usableFromInline let state: UnsafeMutablePointer<State>
    @usableFromInline let mutex: UnsafeMutablePointer<pthread_mutex_t>

    @inlinable
    package init(_ state: State) {
        let buffer = LockStorage<State>.create(minimumCapacity: 1) { _ in state }
        // `create` on a subclass returns an instance of that subclass.
        storage = unsafeDowncast(buffer, to: LockStorage<State>.self)
        (self.state, mutex) = storage.withUnsafeMutablePointers { ($0, $1) }
        mutex.initialize(to: pthread_mutex_t())
        initializeMutex(mutex)
    }

    /// Runs `body` with exclusive access to the state.
    @inlinable
    package func withLock<Result, Failure: Error>(_ body: (inout State) throws(Failure) -> Result) throws(Failure)
        -> Result
    {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return try body(&state.pointee)
    }
}

/// Initializes a mutex that, on Glibc, spins briefly before it sleeps
/// (`PTHREAD_MUTEX_ADAPTIVE_NP`): the cache lock is held for well under a microsecond, and a
/// waiter put to sleep on a futex is woken tens of microseconds later on a virtual machine, so
/// two threads meeting at the lock would otherwise lose far more time sleeping than the lock
/// is ever held (measured: two packed readers fell to a fifth of one). Elsewhere, the default
/// mutex. Neither can fail with these attributes.
@usableFromInline
package func initializeMutex(_ mutex: UnsafeMutablePointer<pthread_mutex_t>) {
    #if canImport(Glibc)
    var attributes = pthread_mutexattr_t()
    pthread_mutexattr_init(&attributes)
    // PTHREAD_MUTEX_ADAPTIVE_NP of <pthread.h>, declared only under _GNU_SOURCE.
    pthread_mutexattr_settype(&attributes, 3)
    pthread_mutex_init(mutex, &attributes)
    pthread_mutexattr_destroy(&attributes)
    #else
    pthread_mutex_init(mutex, nil)
    #endif
}
