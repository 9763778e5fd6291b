import SwiftyCacheCore
import Synchronization

#if canImport(Darwin)
public import Darwin
#elseif canImport(Glibc)
@preconcurrency public import Glibc
#elseif canImport(Musl)
@preconcurrency public import Musl
#endif

/// The allocations of a ``ReadMostlyLock``: the state, the mutex and the gate with its slots,
/// freed together when the last copy of the lock goes.
@usableFromInline
package final class ReadMostlyLockStorage<State: ~Copyable> {
    @usableFromInline let state: UnsafeMutablePointer<State>
    @usableFromInline let mutex: UnsafeMutablePointer<pthread_mutex_t>
    @usableFromInline let gate: UnsafeMutableRawPointer
    let slotCount: Int

    init(_ value: consuming State, slotCount: Int, lineSize: Int) {
        state = .allocate(capacity: 1)
        state.initialize(to: value)
        mutex = .allocate(capacity: 1)
        mutex.initialize(to: pthread_mutex_t())
        initializeMutex(mutex)
        self.slotCount = slotCount
        gate = .allocate(byteCount: lineSize * (2 + slotCount), alignment: lineSize)
        gate.initializeMemory(as: UInt8.self, repeating: 0, count: lineSize * (2 + slotCount))
        // The gate opens once: a fresh lock has had no write to wait out.
        gate.assumingMemoryBound(to: Atomic<Int>.self).initialize(to: Atomic(1))
        (gate + lineSize).assumingMemoryBound(to: Int.self).initialize(to: 0)
        for index in 0..<slotCount {
            let slot = (gate + lineSize * (2 + index)).assumingMemoryBound(to: Atomic<Int>.self)
            for word in 0..<(1 + ReadMostlyLock<State>.counterCount) { (slot + word).initialize(to: Atomic(0)) }
        }
    }

    deinit {
        state.deinitialize(count: 1)
        state.deallocate()
        pthread_mutex_destroy(mutex)
        mutex.deinitialize(count: 1)
        mutex.deallocate()
        gate.deallocate()
    }
}
