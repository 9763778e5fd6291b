#if canImport(Darwin)
import Darwin
#elseif canImport(Glibc)
@preconcurrency import Glibc
#elseif canImport(Musl)
@preconcurrency import Musl
#endif

/// The calling thread's pause, for a loop that waits on another process (a directory lock it
/// holds): there is nothing in this process to wait on.
enum ProcessPause {
    /// Suspends the calling thread for about `microseconds`.
    static func sleep(microseconds: UInt32) {
        usleep(microseconds)
    }

    /// Lets another thread (of any process) run on this core first: a lock another process
    /// holds for a few microseconds is then usually free when this thread runs again.
    static func yield() {
        sched_yield()
    }
}
