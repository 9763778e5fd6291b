import SwiftyCacheTestSupport
import Synchronization
import Testing

/// The tests' bound on waiting for changes: it expires after its own steps, and a watchdog
/// cancelled before that never runs its action.
@Suite struct WatchdogTests {
    @Test func aBoundOfNoStepsExpiresAtOnce() async {
        #expect(await Watchdog.expire(after: 0))
    }

    @Test func aCancelledWatchdogNeverActs() async {
        let fired = Atomic<Bool>(false)
        let watchdog = Watchdog.start(seconds: 120) { fired.store(true, ordering: .relaxed) }
        watchdog.cancel()
        await watchdog.value
        let didFire = fired.load(ordering: .relaxed)
        #expect(!didFire)
    }

    @Test func aCancelledBoundReportsThatItDidNotExpire() async {
        let bound = Task { await Watchdog.expire(after: 120) }
        bound.cancel()
        #expect(await bound.value == false)
    }
}
