import Dispatch

extension DiskLRUCache {
    /// Runs eviction and journal maintenance (``CacheState/runCleanup()``) on the cache's serial
    /// background queue, as the Java cache's cleanup task does. Operations claim the work with
    /// ``CacheState/claimCleanup()`` under the lock, so at most one pass is queued at a time.
    func scheduleCleanup() {
        cleanupQueue.async { [weak self] in
            self?.withState { $0.runCleanup() }
        }
    }

    /// Blocks until the cleanup work queued so far has run. For tests and benchmarks: it
    /// replaces any need to sleep.
    package func waitForBackgroundWork() {
        cleanupQueue.sync {}
    }
}
