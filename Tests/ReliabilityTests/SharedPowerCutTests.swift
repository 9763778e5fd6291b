import Foundation
import SwiftyCacheCore
import SwiftyCacheTestSupport
import Synchronization
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// Power cuts while two caches write one directory in the sharing mode (`sharing: .processes`;
/// two caches in this process hold separate descriptors and locks, as two processes would), each
/// from a thread of its own over keys both write: loop-mounted ext4, `EXT4_IOC_SHUTDOWN` without
/// a log flush while both are still writing, remount, verify. With `syncsWrites`, every key
/// holds what a linearizable store could leave: the value of a call that no call acknowledged
/// (returned before the cut began, or began after it ended) began after, so no acknowledged
/// write is lost unless a later one replaced it. (Two calls on one key that overlap may land in
/// either order: sets append their lines at once, and the one whose line is later in the
/// journal may return first.) Without,
/// a key written since the round's `sync` holds one of the values written to it since, its value
/// at the sync, or nothing; every other key is exactly as at the sync; nothing is torn or mixed.
@Suite(.serialized) struct SharedPowerCutTests {
    /// One call on a key: the value it gave (`nil`: a removal), when it began and ended (one
    /// monotonic clock), and whether it was acknowledged.
    struct Call {
        var value: Int?
        var began: UInt64
        var ended: UInt64
        var acknowledged: Bool
    }

    /// What one key saw this round: its calls, and every value a call gave it (each of them may
    /// be what a cut leaves).
    struct KeyCalls {
        var calls: [Call] = []
        var written: Set<Int?> = []
    }

    /// Whether `value` is what a linearizable store could leave after `calls` over `initial`:
    /// a call that gave it (or the initial value, before every call) ended after every
    /// acknowledged call other than itself began, or overlapped it.
    static func isPossible(_ value: Int?, initial: Int?, calls: [Call]) -> Bool {
        var candidates = calls.filter { $0.value == value }.map { (ended: $0.ended, began: $0.began) }
        if initial == value { candidates.append((ended: 0, began: 0)) }
        return candidates.contains { candidate in
            !calls.contains { other in
                other.acknowledged && other.began > candidate.ended
            }
        }
    }

    static func openShared(_ url: URL, syncsWrites: Bool) throws -> DiskLRUCache {
        var options = DiskLRUCache.Options(syncsWrites: syncsWrites, storage: .packed)
        options.packedSegmentSize = 16 << 10
        options.sharing = .processes
        return try DiskLRUCache(directory: url, appVersion: 1, valueCount: 2, maxSize: 1 << 30, options: options)
    }

    @Test(.tags(.slow), .fullRunOnly, arguments: [true, false])
    func twoWritersSurviveACut(syncsWrites: Bool) throws {
        let name = "cuts-shared-\(syncsWrites ? "sync" : "async")"
        let root = TemporaryDirectory(name)
        guard let (image, mountPoint) = try PowerLossTests.mountImage(in: root, name: name) else { return }
        var mounted = true
        defer { if mounted { _ = try? runCommand(["umount", mountPoint]) } }
        let url = URL(filePath: mountPoint).appending(path: "cache", directoryHint: .isDirectory)
        var violations: [String] = []
        var operations = 0
        let rounds = max(2, PowerCutTests.cuts / 2)
        for round in 0..<rounds {
            let calls = Mutex<[String: KeyCalls]>([:])
            var durable: [String: Int] = [:]
            do {
                let caches = [
                    try Self.openShared(url, syncsWrites: syncsWrites),
                    try Self.openShared(url, syncsWrites: syncsWrites),
                ]
                durable = PowerCutTests.contents(of: caches[0], violations: &violations)
                sync()
                let done = Atomic<Int>(0)
                let target = syncsWrites ? 120 : 1_200
                let reached = DispatchSemaphore(value: 0)
                let cut = PowerCutTests.CutMoment()
                let writers = (0..<2).map { writer in
                    onNewThread {
                        let cache = caches[writer]
                        var random = SplitMix(state: UInt64(0x5AFE_0000 + round * 16 + writer))
                        var afterCut = 0
                        var step = 0
                        while afterCut < 12 {
                            step += 1
                            let beganAfterCut = cut.hasEnded
                            if beganAfterCut { afterCut += 1 }
                            let key = "k\(Int.random(in: 0..<PowerCutTests.universe, using: &random))"
                            let sequence = (round + 1) * 1_000_000 + writer * 100_000 + step
                            let value: Int? = Int.random(in: 0..<10, using: &random) < 8 ? sequence : nil
                            // Recorded before the call: a cut may leave it whether or not it returns.
                            calls.withLock { _ = $0[key, default: KeyCalls()].written.insert(value) }
                            let began = DispatchTime.now().uptimeNanoseconds
                            let returned: Bool
                            if value != nil {
                                let filler = Int.random(in: 0...600, using: &random)
                                let values = (0..<2).map {
                                    CheckedValue.make(key: key, slot: $0, sequence: sequence, fillerLength: filler)
                                }
                                returned = (try? cache.setData(values, forKey: key)) != nil
                            } else {
                                returned = (try? cache.removeValue(forKey: key)) != nil
                            }
                            let ended = DispatchTime.now().uptimeNanoseconds
                            let acknowledged = cut.isAcknowledged(returned: returned, beganAfterEnd: beganAfterCut)
                            calls.withLock { calls in
                                calls[key, default: KeyCalls()].calls.append(
                                    Call(value: value, began: began, ended: ended, acknowledged: acknowledged))
                            }
                            if done.add(1, ordering: .relaxed).newValue == target { reached.signal() }
                        }
                    }
                }
                reached.wait()
                cut.cut(at: mountPoint)
                for writer in writers { writer.wait() }
                operations += done.load(ordering: .relaxed)
                for cache in caches {
                    try? cache.close()
                    cache.waitForBackgroundWork()
                }
            }
            mounted = false
            guard try PowerCutTests.remount(image, at: mountPoint, after: round) else { return }
            mounted = true
            // Opened alone afterwards, as a single writer: the directory as the cut left it.
            let cache = try PowerCutTests.openCache(url, storage: .packed, syncsWrites: syncsWrites)
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
                let isAllowed: Bool
                if syncsWrites {
                    // Every acknowledged call is durable, unless a call that overlapped it or
                    // came after replaced it; calls that threw or ran through the cut may be too.
                    isAllowed = Self.isPossible(value, initial: durable[key], calls: keyCalls.calls)
                } else {
                    isAllowed = keyCalls.written.union([durable[key], Int?.none]).contains(value)
                }
                if !isAllowed {
                    violations.append("round \(round): \(key) is \(String(describing: value))")
                }
            }
            try cache.close()
            cache.waitForBackgroundWork()
        }
        print(
            "power cuts, two sharing writers (syncsWrites: \(syncsWrites)): \(rounds) cuts after \(operations) "
                + "operations; violations \(violations.count)")
        #expect(violations.isEmpty, "\(violations.prefix(10))")
    }
}
