#if canImport(Darwin)
import Darwin
#elseif canImport(Glibc)
@preconcurrency import Glibc
#elseif canImport(Musl)
@preconcurrency import Musl
#endif

/// A mutex taken and released by separate calls, for a lock that one call takes and a later one
/// releases (the journal's output lock is taken under the cache lock and released after it).
/// Use ``LockedState`` wherever a closure can hold the lock instead.
final class OrderedMutex: @unchecked Sendable {
    // @unchecked Sendable is sound: the only state is `mutex`, a pthread mutex allocated and
    // initialized in init, never moved, used only through pthread_mutex_lock and
    // pthread_mutex_unlock, and destroyed in deinit, when no reference is left.
    private let mutex: UnsafeMutablePointer<pthread_mutex_t>

    init() {
        mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
        mutex.initialize(to: pthread_mutex_t())
        initializeMutex(mutex)
    }

    deinit {
        pthread_mutex_destroy(mutex)
        mutex.deinitialize(count: 1)
        mutex.deallocate()
    }

    /// Takes the mutex, waiting while another thread holds it.
    func lock() { pthread_mutex_lock(mutex) }

    /// Releases the mutex; call it on the thread that took it.
    func unlock() { pthread_mutex_unlock(mutex) }
}
