import Dispatch
import Synchronization

extension DiskLRUCache {
    /// Runs eviction and journal maintenance on the cache's serial background queue, as the
    /// Java cache's cleanup task does. Callers claim the work with `CacheState.claimCleanup()`
    /// under the lock, so at most one cleanup is queued at a time.
    func scheduleCleanup() {
        cleanupQueueForScheduling.async { [weak self] in
            self?.runCleanup()
        }
    }

    /// One cleanup pass: repairs a broken journal, evicts down to `maxSize`, and compacts the
    /// journal when redundant lines outnumber entries. Failures leave the work for the next
    /// pass (scheduled by the next operation); they never surface as crashes.
    func runCleanup() {
        withState { state in
            state.isCleanupScheduled = false
            guard !state.isClosed else { return }
            do {
                try state.ensureJournalWritable(operation: "cleanup", key: nil)
                try state.trimToSize()
                if state.isJournalRebuildRequired { try state.rebuildJournal() }
            } catch {
                // Recorded in `journalFailure` where it matters; retried on the next pass.
            }
        }
    }

    /// Blocks until the cleanup work queued so far has run. For tests and benchmarks: it
    /// replaces any need to sleep.
    package func waitForBackgroundWork() {
        cleanupQueueForScheduling.sync {}
    }
}
