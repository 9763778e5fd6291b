public import Dispatch
import Foundation

/// Runs `body` on a thread of its own and returns a semaphore signalled when it returns.
///
/// Not on a dispatch queue: on a 2-core machine the global queues' pool may not add a thread
/// while its threads are blocked, so a test whose threads wait on each other (a held system
/// call, a lock) would measure the pool instead of the cache.
public func onNewThread(_ body: @escaping @Sendable () -> Void) -> DispatchSemaphore {
    let done = DispatchSemaphore(value: 0)
    Thread {
        body()
        done.signal()
    }.start()
    return done
}

/// Runs blocking work on a dispatch thread and waits for it, so that it never blocks the
/// cooperative pool that the `async` tests running beside the caller share.
public func offPool(_ body: @escaping @Sendable () -> Void) async {
    await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
        DispatchQueue.global().async {
            body()
            continuation.resume()
        }
    }
}
