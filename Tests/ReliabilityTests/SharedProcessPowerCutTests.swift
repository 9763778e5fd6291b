import Foundation
import SwiftyCacheCore
import SwiftyCacheTestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// Power cuts while two processes write one directory in the sharing mode (the kill suite's
/// `sharer` workers: sets, batches of three, removals, reads and compactions over 40 keys both
/// write; 16 KiB segments): loop-mounted ext4, `EXT4_IOC_SHUTDOWN` without a log flush once each
/// process completed a random number of operations; each worker goes on until a call fails (it
/// then exits), remount, and the directory is checked against both logs. With `syncsWrites`
/// every call that returned before the cut began is durable, so each key holds what a
/// linearizable store could leave. Without, a key holds what a write of it wrote, its value
/// before the round, or nothing, and a key neither process wrote this round is as it was. In
/// both, nothing is torn or mixed, and the directory checks out.
@Suite(.serialized) struct SharedProcessPowerCutTests {
    /// The system's monotonic clock, the one the workers' logs use.
    static func monotonicNanoseconds() -> UInt64 {
        var time = timespec()
        clock_gettime(CLOCK_MONOTONIC, &time)
        return UInt64(time.tv_sec) * 1_000_000_000 + UInt64(time.tv_nsec)
    }

    @Test(.tags(.slow), .fullRunOnly, arguments: [true, false])
    func twoProcessesSurviveACut(syncsWrites: Bool) throws {
        let name = "cuts-processes-\(syncsWrites ? "sync" : "async")"
        let root = TemporaryDirectory(name)
        guard let (image, mountPoint) = try PowerLossTests.mountImage(in: root, name: name) else { return }
        var mounted = true
        defer { if mounted { _ = try? runCommand(["umount", mountPoint]) } }
        let directory = URL(filePath: mountPoint).appending(path: "cache", directoryHint: .isDirectory)
        var generator = SystemRandomNumberGenerator()
        var state: [String: Int] = [:]
        var findings: [String] = []
        var completed = 0
        var inFlight = 0
        let rounds = max(2, PowerCutTests.cuts / 2)
        for round in 0..<rounds {
            let logs = (0..<2).map { root.appending("round\(round)-\($0).log") }
            let (processes, errors) = try SharedKillTests.launchSharers(
                on: directory, logs: logs, round: round, maxSize: Int.max, syncsWrites: syncsWrites, using: &generator)
            let target = Int.random(in: syncsWrites ? 20...200 : 200...2_000, using: &generator)
            while processes.allSatisfy(\.isRunning),
                try logs.contains(where: { try SharedKillTests.read(log: $0).completed < target })
            {
                usleep(200)  // polling the workers' progress, not synchronising on time
            }
            // A call that returns while the cut runs is in doubt (a real power cut returns
            // nothing; `EXT4_IOC_SHUTDOWN` lets a `write` and an `fdatasync` under way return
            // success and still lose their bytes): one that began before it ended and returned
            // after it began is taken as unfinished.
            let cutBegan = SharedProcessPowerCutTests.monotonicNanoseconds()
            PowerCutTests.cutPower(at: mountPoint)
            let cutEnded = SharedProcessPowerCutTests.monotonicNanoseconds()
            // Each goes on until a call of its fails; one still running after 10 s is killed.
            let deadline = Date().addingTimeInterval(10)
            while processes.contains(where: \.isRunning) && Date() < deadline { usleep(200) }
            for (worker, process) in processes.enumerated() {
                if process.isRunning { kill(process.processIdentifier, SIGKILL) }
                process.waitUntilExit()
                // 3: a read found a value torn, mixed or another key's.
                if process.terminationReason == .exit && process.terminationStatus == 3 {
                    let said = String(decoding: errors[worker].fileHandleForReading.availableData, as: UTF8.self)
                    findings.append("round \(round): worker \(worker): \(said)")
                }
            }
            var (operations, keysInFlight) = try SharedKillTests.operations(in: logs)
            for key in operations.keys {
                for index in operations[key, default: []].indices {
                    let operation = operations[key, default: []][index]
                    if let completed = operation.completed, completed >= cutBegan, operation.began < cutEnded {
                        operations[key, default: []][index].completed = nil
                    }
                }
            }
            inFlight += keysInFlight
            completed += try logs.reduce(0) { $0 + (try SharedKillTests.read(log: $1).completed) }
            mounted = false
            guard try PowerCutTests.remount(image, at: mountPoint, after: round) else { return }
            mounted = true
            guard let observed = SharedKillTests.observed(in: directory, round: round, findings: &findings) else {
                break
            }
            SharedKillTests.checkKeys(
                observed, against: operations, from: state, round: round, linearizable: syncsWrites,
                findings: &findings)
            for key in Set(observed.keys).union(state.keys) where operations[key] == nil && observed[key] != state[key]
            {
                findings.append(
                    "round \(round): \(key), which no process wrote, holds \(String(describing: observed[key]))")
            }
            state = observed
        }
        print(
            "power cuts, two sharing processes (syncsWrites: \(syncsWrites)): \(rounds) cuts after \(completed) "
                + "operations returned (\(inFlight) in flight); findings \(findings.count)")
        #expect(completed > 0)
        #expect(findings.isEmpty, "\(findings.prefix(10))")
    }
}
