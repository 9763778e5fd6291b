import Foundation
import SwiftyCacheCore
import SwiftyCacheTestSupport
import Synchronization
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// Power cuts while four threads make durable commits (packed storage, `syncsWrites`: group
/// commit, the segments as the log): loop-mounted ext4, `EXT4_IOC_SHUTDOWN` without a log flush
/// while the threads are still writing, remount, verify. Each thread owns its keys. Every call
/// that returned before the cut began (or began after it ended) holds after the cut; a call that
/// threw, or returned while the cut ran, may or may not (its sync may have reached the disk
/// before it failed), but nothing else: no value never written, no torn one, no untouched key
/// changed.
@Suite(.serialized) struct ConcurrentPowerCutTests {
    static let threads = 4

    /// What one key saw: the value of its last call that returned, and the values of the calls
    /// that threw after it.
    struct KeyCalls {
        var acknowledged: Int??
        var inDoubt: Set<Int?> = []
    }

    @Test(.tags(.slow), .fullRunOnly) func returnedDurableCommitsOfFourThreadsSurviveACut() throws {
        let name = "cuts-concurrent"
        let root = TemporaryDirectory(name)
        guard let (image, mountPoint) = try PowerLossTests.mountImage(in: root, name: name) else { return }
        var mounted = true
        defer { if mounted { _ = try? runCommand(["umount", mountPoint]) } }
        let url = URL(filePath: mountPoint).appending(path: "cache", directoryHint: .isDirectory)
        var violations: [String] = []
        var operations = 0
        for round in 0..<max(2, PowerCutTests.cuts / 2) {
            let calls = Mutex<[String: KeyCalls]>([:])
            var durable: [String: Int] = [:]
            do {
                let cache = try PowerCutTests.openCache(url, storage: .packed, syncsWrites: true)
                durable = PowerCutTests.contents(of: cache, violations: &violations)
                sync()
                let done = Atomic<Int>(0)
                let target = 160
                let reached = DispatchSemaphore(value: 0)
                let cut = PowerCutTests.CutMoment()
                let writers = (0..<Self.threads).map { thread in
                    onNewThread {
                        var random = SplitMix(state: UInt64(0xC0FF_EE00 + round * 16 + thread))
                        var afterCut = 0
                        var step = 0
                        while afterCut < 12 {
                            step += 1
                            let beganAfterCut = cut.hasEnded
                            if beganAfterCut { afterCut += 1 }
                            // Thread `thread` owns the keys whose index is `thread` modulo four.
                            let index = Int.random(in: 0..<(PowerCutTests.universe / Self.threads), using: &random)
                            let key = "k\(index * Self.threads + thread)"
                            let sequence = (round + 1) * 1_000_000 + thread * 100_000 + step
                            let value: Int?
                            let returned: Bool
                            if Int.random(in: 0..<10, using: &random) < 8 {
                                value = sequence
                                let filler = Int.random(in: 0...600, using: &random)
                                let values = (0..<2).map {
                                    CheckedValue.make(key: key, slot: $0, sequence: sequence, fillerLength: filler)
                                }
                                returned = (try? cache.setData(values, forKey: key)) != nil
                            } else {
                                value = nil
                                returned = (try? cache.removeValue(forKey: key)) != nil
                            }
                            let acknowledged = cut.isAcknowledged(returned: returned, beganAfterEnd: beganAfterCut)
                            calls.withLock { calls in
                                if acknowledged {
                                    calls[key] = KeyCalls(acknowledged: .some(value))
                                } else {
                                    calls[key, default: KeyCalls()].inDoubt.insert(value)
                                }
                            }
                            if done.add(1, ordering: .relaxed).newValue == target { reached.signal() }
                        }
                    }
                }
                reached.wait()
                cut.cut(at: mountPoint)
                for writer in writers { writer.wait() }
                operations += done.load(ordering: .relaxed)
                try? cache.close()
                cache.waitForBackgroundWork()
            }
            mounted = false
            guard try PowerCutTests.remount(image, at: mountPoint, after: round) else { return }
            mounted = true
            let cache = try PowerCutTests.openCache(url, storage: .packed, syncsWrites: true)
            if let reason = cache.recoveryReport.wipeReason { violations.append("round \(round): wiped (\(reason))") }
            let found = PowerCutTests.contents(of: cache, violations: &violations)
            let seen = calls.withLock { $0 }
            for index in 0..<PowerCutTests.universe {
                let key = "k\(index)"
                let value = found[key]
                guard let keyCalls = seen[key] else {
                    if value != durable[key] {
                        violations.append("round \(round): untouched \(key) is \(String(describing: value))")
                    }
                    continue
                }
                // Before any call returned, the key's state at the round's start counts as returned.
                let returned = keyCalls.acknowledged ?? .some(durable[key])
                if value != returned && !keyCalls.inDoubt.contains(value) {
                    violations.append(
                        "round \(round): \(key) is \(String(describing: value)), returned \(String(describing: returned))"
                    )
                }
            }
            try cache.close()
            cache.waitForBackgroundWork()
        }
        print(
            "power cuts, four threads of durable commits: \(max(2, PowerCutTests.cuts / 2)) cuts after \(operations) "
                + "operations; violations \(violations.count)")
        #expect(violations.isEmpty, "\(violations.prefix(10))")
    }
}
