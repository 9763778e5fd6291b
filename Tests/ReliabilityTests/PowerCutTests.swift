import Foundation
import SwiftyCacheCore
import SwiftyCacheTestSupport
import Synchronization
import Testing

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Power cuts in rounds, as an outside attack found the cache losing everything: a loop-mounted
/// ext4, `sync(2)` so the state is durable, then a writer overwriting, removing, rebuilding its
/// journal and (packed) compacting, then the file system's log committed (as time would) and
/// `EXT4_IOC_SHUTDOWN` without a log flush, remount, verify, next round on the same directory.
///
/// What a cut may cost: without `syncsWrites`, only keys changed since the round's `sync` (each
/// holds its state at the sync, a value written to it since, or nothing); with it, nothing that
/// returned. Every key untouched since the sync is exactly as it was, never torn or mixed, and
/// the journal always parses.
@Suite(.serialized) struct PowerCutTests {
    static let cuts = ProcessInfo.processInfo.environment["SWIFTYCACHE_POWER_CUTS"].flatMap(Int.init) ?? 20
    static let universe = 160

    /// The sequence each key of the universe holds, `nil` for a miss; a value that is not a
    /// whole pair of its own key is a violation.
    static func contents(of cache: DiskLRUCache, violations: inout [String]) -> [String: Int] {
        var found: [String: Int] = [:]
        for index in 0..<universe {
            let key = "k\(index)"
            guard let values = try? cache.data(forKey: key) else { continue }
            guard CheckedValue.isConsistentPair(values, key: key),
                let sequence = CheckedValue.parse(values[0])?.sequence
            else {
                violations.append("\(key): torn or mixed: \(CheckedValue.describe(values))")
                continue
            }
            found[key] = sequence
        }
        return found
    }

    /// Groups of keys that only batches write, each batch the whole group with one sequence.
    static let groups = 6
    static let groupSize = 4

    static func groupBatch(_ group: Int, sequence: Int) -> DiskLRUCache.WriteBatch {
        var batch = DiskLRUCache.WriteBatch()
        for member in 0..<groupSize {
            let key = "g\(group)-\(member)"
            batch.setData(
                (0..<2).map { CheckedValue.make(key: key, slot: $0, sequence: sequence, fillerLength: 200) },
                forKey: key)
        }
        return batch
    }

    /// The sequence a group holds (`nil` when none of it is there). With `atomic`, every key of
    /// the group must hold the same one: a batch never half there.
    static func groupState(
        _ group: Int, in cache: DiskLRUCache, atomic: Bool, violations: inout [String]
    ) -> Int? {
        var sequences: [Int?] = []
        for member in 0..<groupSize {
            let key = "g\(group)-\(member)"
            guard let values = try? cache.data(forKey: key) else {
                sequences.append(nil)
                continue
            }
            guard CheckedValue.isConsistentPair(values, key: key), let parsed = CheckedValue.parse(values[0]) else {
                violations.append("\(key): torn or mixed: \(CheckedValue.describe(values))")
                return nil
            }
            sequences.append(parsed.sequence)
        }
        if atomic && Set(sequences).count > 1 { violations.append("group \(group): half a batch: \(sequences)") }
        return sequences.compactMap { $0 }.max()
    }

    static func openCache(_ url: URL, storage: DiskLRUCache.Storage, syncsWrites: Bool) throws -> DiskLRUCache {
        var options = DiskLRUCache.Options(syncsWrites: syncsWrites, storage: storage)
        options.packedSegmentSize = 16 << 10
        return try DiskLRUCache(directory: url, appVersion: 1, valueCount: 2, maxSize: 1 << 30, options: options)
    }

    /// Forces the file system to commit its log, as its timer would a few seconds on: an
    /// `fsync` of a file of the test's own. Data the cache never synced is not written by it.
    static func commitFileSystemLog(at mountPoint: String) {
        let fd = open(mountPoint + "/witness", O_WRONLY | O_CREAT | O_APPEND, 0o600)
        guard fd >= 0 else { return }
        _ = write(fd, "w", 1)
        _ = fsync(fd)
        close(fd)
    }

    /// When a cut that writers run through began and ended, as the writers see it: a call that
    /// returns while it runs is in doubt (a real power cut returns nothing; `EXT4_IOC_SHUTDOWN`
    /// lets a `write` and an `fdatasync` under way return success and still lose their bytes).
    final class CutMoment: Sendable {
        private let begun = Atomic<Bool>(false)
        private let ended = Atomic<Bool>(false)

        /// Whether the cut is over: read before a call, it says the call began after it.
        var hasEnded: Bool { ended.load(ordering: .acquiring) }

        /// Cuts the power (``cutPower(at:)``), noting when it began and ended.
        func cut(at mountPoint: String) {
            begun.store(true, ordering: .releasing)
            PowerCutTests.cutPower(at: mountPoint)
            ended.store(true, ordering: .releasing)
        }

        /// Whether a call that `returned` must hold after the cut: it returned before the cut
        /// began, or began after it ended (`beganAfterEnd`, ``hasEnded`` read before it).
        func isAcknowledged(returned: Bool, beganAfterEnd: Bool) -> Bool {
            returned && (beganAfterEnd || !begun.load(ordering: .acquiring))
        }
    }

    /// A power cut while writers run: the file system's log committed (as its timer would),
    /// then `EXT4_IOC_SHUTDOWN` without a log flush, so nothing more reaches the disk.
    static func cutPower(at mountPoint: String) {
        commitFileSystemLog(at: mountPoint)
        let fd = open(mountPoint, O_RDONLY)
        var flags = PowerLossTests.noLogFlush
        #expect(ioctl(fd, PowerLossTests.shutdownRequest, &flags) == 0)
        close(fd)
    }

    /// Unmounts, waiting (60 s at most) for what the closed cache's background work still holds
    /// open, a compaction reading a segment for example, to be let go.
    /// Unmounts the image cut in `round` and mounts it again; records an issue and returns
    /// `false` when either fails.
    static func remount(_ image: String, at mountPoint: String, after round: Int) throws -> Bool {
        guard try unmount(mountPoint) else {
            Issue.record("the image did not unmount after round \(round)")
            return false
        }
        guard try runCommand(["mount", "-o", "loop", image, mountPoint]).status == 0 else {
            Issue.record("the image did not mount again after round \(round)")
            return false
        }
        return true
    }

    static func unmount(_ mountPoint: String) throws -> Bool {
        let deadline = ContinuousClock.now + .seconds(60)
        while try runCommand(["umount", mountPoint]).status != 0 {
            guard ContinuousClock.now < deadline else {
                // Which of this process's descriptors point into the file system, if any.
                let descriptors = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? []
                let held = descriptors.compactMap { fd in
                    (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/\(fd)"))
                        .flatMap { $0.hasPrefix(mountPoint) ? "\(fd) -> \($0)" : nil }
                }
                print("still open on \(mountPoint), by this process: \(held)")
                return false
            }
            usleep(10_000)
        }
        return true
    }

    @Test(.tags(.slow), .fullRunOnly, arguments: bothStorages, [false, true])
    func aPowerCutCostsOnlyWhatChangedSinceTheLastSync(storage: DiskLRUCache.Storage, syncsWrites: Bool) throws {
        let name = "cuts-\(storage.inlineLimit == nil ? "files" : "packed")-\(syncsWrites ? "synced" : "buffered")"
        // An attack run may repeat one case (SWIFTYCACHE_POWER_CUT_CASES=cuts-files-buffered,…).
        if let cases = ProcessInfo.processInfo.environment["SWIFTYCACHE_POWER_CUT_CASES"],
            !cases.split(separator: ",").contains(Substring(name))
        {
            print("\(name): not among SWIFTYCACHE_POWER_CUT_CASES (\(cases)), not run")
            return
        }
        let root = TemporaryDirectory(name)
        guard let (image, mountPoint) = try PowerLossTests.mountImage(in: root, name: name) else { return }
        var mounted = true
        defer { if mounted { _ = try? runCommand(["umount", mountPoint]) } }
        let url = URL(filePath: mountPoint).appending(path: "cache", directoryHint: .isDirectory)
        var random = SplitMix(state: syncsWrites ? 0x5EED_0001 : 0x5EED_0002)
        var violations: [String] = []
        var sequence = 0
        var (rebuilt, wiped, lostUntouched, lostTouched, operations) = (0, 0, 0, 0, 0)
        // Values whose files a cut left at their length but unwritten, dropped on open.
        var unwritten = 0
        for round in 0..<Self.cuts {
            var durable: [String: Int] = [:]
            var allowed: [String: Set<Int?>] = [:]
            var acknowledged: [String: Int?] = [:]
            var groupAcknowledged: [Int: Int] = [:]
            var groupWritten: [Int: Set<Int>] = [:]
            do {
                let cache = try Self.openCache(url, storage: storage, syncsWrites: syncsWrites)
                durable = Self.contents(of: cache, violations: &violations)
                for group in 0..<Self.groups {
                    if let state = Self.groupState(
                        group, in: cache, atomic: storage.inlineLimit != nil, violations: &violations)
                    {
                        groupAcknowledged[group] = state
                        groupWritten[group] = [state]
                    }
                }
                sync()
                let count =
                    syncsWrites ? Int.random(in: 40...160, using: &random) : Int.random(in: 400...2600, using: &random)
                // A round changes a third of the keys: the others must come through exactly.
                let hot = (0..<Self.universe).shuffled(using: &random).prefix(Self.universe / 3)
                for _ in 0..<count {
                    if Int.random(in: 0..<10, using: &random) == 0 {
                        // A batch sets a whole group (packed storage: one unit).
                        let group = Int.random(in: 0..<Self.groups, using: &random)
                        sequence += 1
                        try cache.write(Self.groupBatch(group, sequence: sequence))
                        groupAcknowledged[group] = sequence
                        groupWritten[group, default: []].insert(sequence)
                        continue
                    }
                    let key = "k\(hot.randomElement(using: &random) ?? 0)"
                    if allowed[key] == nil { allowed[key] = [durable[key]] }
                    if Int.random(in: 0..<10, using: &random) < 8 {
                        sequence += 1
                        let filler = Int.random(in: 0...1_500, using: &random)
                        try cache.setData(
                            (0..<2).map {
                                CheckedValue.make(key: key, slot: $0, sequence: sequence, fillerLength: filler)
                            },
                            forKey: key)
                        allowed[key]?.insert(sequence)
                        acknowledged[key] = .some(sequence)
                    } else {
                        _ = try cache.removeValue(forKey: key)
                        allowed[key]?.insert(nil)
                        acknowledged[key] = .some(nil)
                    }
                }
                operations += count
                Self.commitFileSystemLog(at: mountPoint)
                let fd = open(mountPoint, O_RDONLY)
                var flags = PowerLossTests.noLogFlush
                #expect(ioctl(fd, PowerLossTests.shutdownRequest, &flags) == 0)
                close(fd)
                // The file system is gone: the writer keeps calling, as a process the cut did not
                // stop would. Every call fails or, if it returns, must hold after the remount.
                _ = try? cache.setData([Data("late".utf8), Data("write".utf8)], forKey: "late")
                for _ in 0..<24 {
                    let key = "k\(hot.randomElement(using: &random) ?? 0)"
                    if allowed[key] == nil { allowed[key] = [durable[key]] }
                    if Bool.random(using: &random) {
                        sequence += 1
                        let values = (0..<2).map {
                            CheckedValue.make(key: key, slot: $0, sequence: sequence, fillerLength: 64)
                        }
                        allowed[key]?.insert(sequence)
                        if (try? cache.setData(values, forKey: key)) != nil { acknowledged[key] = .some(sequence) }
                    } else {
                        allowed[key]?.insert(nil)
                        if (try? cache.removeValue(forKey: key)) != nil { acknowledged[key] = .some(nil) }
                    }
                }
                try? cache.close()
                // A compaction or rebuild still running in the background keeps the cache, and
                // its descriptors, until it ends.
                cache.waitForBackgroundWork()
            }
            mounted = false
            guard try Self.remount(image, at: mountPoint, after: round) else { return }
            mounted = true
            let cache = try Self.openCache(url, storage: storage, syncsWrites: syncsWrites)
            if let reason = cache.recoveryReport.wipeReason {
                wiped += 1
                violations.append("round \(round): wiped (\(reason))")
            }
            if cache.recoveryReport.rebuiltJournal { rebuilt += 1 }
            unwritten += cache.recoveryReport.droppedUnwrittenValues
            let found = Self.contents(of: cache, violations: &violations)
            for group in 0..<Self.groups {
                // Packed storage: a batch is one unit. File storage: one entry at a time.
                let state = Self.groupState(
                    group, in: cache, atomic: storage.inlineLimit != nil, violations: &violations)
                if syncsWrites, storage.inlineLimit != nil, state != groupAcknowledged[group] {
                    violations.append(
                        "round \(round): group \(group) is \(String(describing: state)), returned \(String(describing: groupAcknowledged[group]))"
                    )
                }
                if let state, groupWritten[group]?.contains(state) == false {
                    violations.append("round \(round): group \(group) is \(state), never written")
                }
            }
            for index in 0..<Self.universe {
                let key = "k\(index)"
                let value = found[key]
                if let states = allowed[key] {
                    if syncsWrites, let last = acknowledged[key], value != last {
                        violations.append(
                            "round \(round): \(key) is \(String(describing: value)), returned \(String(describing: last))"
                        )
                    } else if !syncsWrites && value == nil {
                        // A key written since the sync may be dropped: its new value's bytes were
                        // never forced, and a value that fails its length or checksum is a miss.
                    } else if !states.contains(value) {
                        violations.append(
                            "round \(round): \(key) is \(String(describing: value)), never written since the sync")
                    }
                    if value == nil, case .some(.some) = acknowledged[key] { lostTouched += 1 }
                } else if value != durable[key] {
                    lostUntouched += 1
                    violations.append(
                        "round \(round): untouched \(key) is \(String(describing: value)), was \(String(describing: durable[key]))"
                    )
                }
            }
            try cache.close()
            cache.waitForBackgroundWork()
        }
        print(
            "power cuts, \(storage), syncsWrites \(syncsWrites): \(Self.cuts) cuts after \(operations) operations; "
                + "untouched keys lost \(lostUntouched), keys set since the sync and empty after the cut \(lostTouched), wipes \(wiped), "
                + "values dropped as unwritten \(unwritten), violations \(violations.count)")
        #expect(violations.isEmpty, "\(violations.prefix(10))")
    }
}
