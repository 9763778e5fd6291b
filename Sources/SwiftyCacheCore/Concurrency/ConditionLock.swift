#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
#if canImport(Darwin)
import Darwin
#elseif canImport(Glibc)
@preconcurrency import Glibc
#elseif canImport(Musl)
@preconcurrency import Musl
#endif

/// A value guarded by a pthread mutex, with a condition variable to wait on.
final class ConditionLock<Value>: @unchecked Sendable {
    // @unchecked Sendable is sound: `value` is read and written only while the mutex is held
    // (between `lock()` and `unlock()`, or inside `withLock`); `wait()` releases and retakes it
    // atomically. The mutex and the condition are allocated once in init and destroyed in
    // deinit, when no reference is left.
    /// The guarded value: touch it only while holding the lock.
    var value: Value
    private let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
    private let condition = UnsafeMutablePointer<pthread_cond_t>.allocate(capacity: 1)

    init(_ value: Value) {
        self.value = value
        mutex.initialize(to: pthread_mutex_t())
        condition.initialize(to: pthread_cond_t())
        pthread_mutex_init(mutex, nil)
        pthread_cond_init(condition, nil)
    }

    deinit {
        pthread_cond_destroy(condition)
        pthread_mutex_destroy(mutex)
        condition.deallocate()
        mutex.deallocate()
    }

    func lock() { pthread_mutex_lock(mutex) }
    func unlock() { pthread_mutex_unlock(mutex) }

    /// Releases the lock until ``signal()``, then takes it again. Call it holding the lock.
    func wait() { pthread_cond_wait(condition, mutex) }

    /// ``wait()`` for at most `nanoseconds` (a wakeup may come earlier: the caller checks what
    /// it waits for again). Call it holding the lock.
    func wait(nanoseconds: Int) {
        // The deadline is on the realtime clock, the one every platform's timed wait takes; a
        // jump of that clock only lengthens or shortens this one short wait.
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        let total = Int(now.tv_nsec) &+ max(0, nanoseconds)
        var deadline = timespec()
        deadline.tv_sec = now.tv_sec &+ total / 1_000_000_000
        deadline.tv_nsec = total % 1_000_000_000
        _ = pthread_cond_timedwait(condition, mutex, &deadline)
    }

    /// Nanoseconds on the monotonic clock, for measuring how long something took.
    static func monotonicNanoseconds() -> UInt64 {
        var time = timespec()
        clock_gettime(CLOCK_MONOTONIC, &time)
        return UInt64(time.tv_sec) &* 1_000_000_000 &+ UInt64(time.tv_nsec)
    }

    func withLock<Result>(_ body: (inout Value) -> Result) -> Result {
        lock()
        defer { unlock() }
        return body(&value)
    }

    /// Wakes every waiter. Call it holding the lock.
    func broadcast() { pthread_cond_broadcast(condition) }

    /// Wakes one waiter.
    func signal() {
        lock()
        pthread_cond_signal(condition)
        unlock()
    }
}
