import Synchronization

#if canImport(Darwin)
public import Darwin
#elseif canImport(Glibc)
@preconcurrency public import Glibc
#elseif canImport(Musl)
@preconcurrency public import Musl
#endif

/// Which slot of a ``ReadMostlyLock`` each thread uses: threads are numbered in the order they
/// first read, the number kept in a thread-specific value.
@usableFromInline
package enum ReaderSlots {
    /// The key of the thread-specific value (the thread's number + 1), or `nil` if the system
    /// had no key left; threads are then told apart by hashing `pthread_self()`.
    @usableFromInline static let key: pthread_key_t? = {
        var key = pthread_key_t()
        return pthread_key_create(&key, nil) == 0 ? key : nil
    }()

    static let next = Atomic<Int>(0)

    /// The calling thread's number.
    ///
    /// - Complexity: O(1): one thread-specific lookup after the thread's first call.
    @inlinable
    package static var current: Int {
        guard let key else { return hashedThreadIdentity }
        if let value = pthread_getspecific(key) { return Int(bitPattern: value) &- 1 }
        return assign(key)
    }

    @usableFromInline
    static func assign(_ key: pthread_key_t) -> Int {
        // Bounded so that `number + 1` fits a pointer and never reads as null.
        let number = next.add(1, ordering: .relaxed).oldValue & 0xFFFF
        pthread_setspecific(key, UnsafeRawPointer(bitPattern: number &+ 1))
        return number
    }

    @usableFromInline
    static var hashedThreadIdentity: Int {
        #if canImport(Darwin)
        let identity = UInt(bitPattern: pthread_self())
        #else
        let identity = UInt(pthread_self())
        #endif
        return Int(truncatingIfNeeded: (identity &* 0x9E37_79B9_7F4A_7C15) >> 58)
    }
}
