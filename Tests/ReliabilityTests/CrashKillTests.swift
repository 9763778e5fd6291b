import Foundation
import SwiftyCacheCore
import SwiftyCacheTestSupport
import Testing

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

extension Slow {
    /// Kills a worker running a random workload with SIGKILL at random moments, reopens the cache
    /// each time, and checks it against what the worker logged. `SWIFTYCACHE_CRASH_KILLS` raises the
    /// number of kills (default 200).
    @Suite(.tags(.slow), .fullRunOnly) struct CrashKillTests {
        static let kills = ProcessInfo.processInfo.environment["SWIFTYCACHE_CRASH_KILLS"].flatMap(Int.init) ?? 200

        static let worker = builtExecutable(
            "swiftycache-crash-worker",
            packageRoot: URL(filePath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
                .deletingLastPathComponent())

        /// What each key should hold: both slots' sequence numbers, or absent.
        typealias Model = [String: [Int]]

        struct Operation {
            var verb: String
            var key: String
            var sequence: Int

            /// The keys it writes: one, or a batch's (`k1,k2,k3`).
            var keys: [String] { key.split(separator: ",").map(String.init) }

            func apply(to model: inout Model) {
                switch verb {
                case "SET": model[key] = [sequence, sequence]
                case "PARTIAL": if let old = model[key] { model[key] = [old[0], sequence] }
                case "REMOVE": model[key] = nil
                case "BATCH": for key in keys { model[key] = [sequence, sequence] }
                default: break
                }
            }
        }

        /// The model after every completed operation, and the operation in flight, if any.
        static func replay(_ log: String) -> (model: Model, inFlight: Operation?, completed: Int) {
            var model: Model = [:]
            var pending: Operation?
            var completed = 0
            for line in log.split(separator: "\n") {
                let fields = line.split(separator: " ")
                if fields.first == "B", fields.count == 4, let sequence = Int(fields[3]) {
                    pending = Operation(verb: String(fields[1]), key: String(fields[2]), sequence: sequence)
                } else if fields.first == "C" {
                    pending?.apply(to: &model)
                    pending = nil
                    completed += 1
                }
            }
            return (model, pending, completed)
        }

        @Test func killedAtRandomMomentsTheCacheReopensConsistent() throws {
            let root = TemporaryDirectory()
            // Two directories: one without eviction, where every committed entry must be exactly
            // as logged, and one under eviction pressure, where an entry may also be gone.
            // Each in both storages; packed workers compact often, so kills land inside
            // compaction too.
            let modes: [(directory: URL, log: URL, maxSize: Int, storage: String)] = [
                (root.appending("exact"), root.appending("exact.log"), Int.max, "files"),
                (root.appending("evicting"), root.appending("evicting.log"), 40_000, "files"),
                (root.appending("packed-exact"), root.appending("packed-exact.log"), Int.max, "packed"),
                (root.appending("packed-evicting"), root.appending("packed-evicting.log"), 40_000, "packed"),
            ]
            for mode in modes {
                _ = FileManager.default.createFile(atPath: mode.log.path(percentEncoded: false), contents: nil)
            }
            var generator = SystemRandomNumberGenerator()
            var survived = 0
            var packedBatchesInFlight = 0
            var outcomes = (committed: 0, dropped: 0, neverJournaled: 0, betweenOperations: 0, underEviction: 0)
            for round in 0..<Self.kills {
                let mode = modes[round % modes.count]
                let before = Self.replay(try String(contentsOf: mode.log, encoding: .utf8)).completed
                let process = Process()
                process.executableURL = Self.worker
                process.arguments = [
                    mode.directory.path(percentEncoded: false), mode.log.path(percentEncoded: false),
                    String(UInt64.random(in: 1...UInt64.max, using: &generator)), String((round + 1) * 1_000_000),
                    String(mode.maxSize), mode.storage,
                ]
                let errors = Pipe()
                process.standardError = errors
                try process.run()
                // Let it complete a random number of operations, then kill it wherever it is.
                let target = before + Int.random(in: 1...25, using: &generator)
                let deadline = Date().addingTimeInterval(20)
                while process.isRunning && Date() < deadline {
                    let log = try String(contentsOf: mode.log, encoding: .utf8)
                    if Self.replay(log).completed >= target { break }
                    usleep(200)  // polling the worker's progress, not synchronising on time
                }
                #expect(
                    process.isRunning,
                    "the worker stopped by itself: \(String(decoding: errors.fileHandleForReading.availableData, as: UTF8.self))"
                )
                kill(process.processIdentifier, SIGKILL)
                process.waitUntilExit()
                #expect(process.terminationReason == .uncaughtSignal)

                let (model, inFlight, _) = Self.replay(try String(contentsOf: mode.log, encoding: .utf8))
                let state: [String: [CheckedValue.Parsed]]
                do {
                    // Checked without a size limit, so no eviction runs while it reads.
                    state = try CacheInvariants.check(
                        mode.directory, storage: mode.storage == "packed" ? .packed(inlineLimit: 2048) : .files)
                } catch {
                    Issue.record("kill \(round): \(error)")
                    return
                }
                var afterInFlight = model
                inFlight?.apply(to: &afterInFlight)
                // A packed batch is one unit: its keys all hold the batch, or none does.
                if let inFlight, inFlight.verb == "BATCH", mode.storage == "packed", mode.maxSize == Int.max {
                    packedBatchesInFlight += 1
                    let written = inFlight.keys.filter { state[$0]?.map(\.sequence) == afterInFlight[$0] }
                    #expect(
                        written.isEmpty || written.count == inFlight.keys.count,
                        "kill \(round): half a batch: \(written) of \(inFlight.keys)")
                }
                for key in Set(model.keys).union(state.keys).union(afterInFlight.keys) {
                    let actual = state[key]?.map(\.sequence)
                    // A kill between an edit's DIRTY and CLEAN lines (a one-shot write's commit) drops
                    // that entry, as the journal format requires; under eviction any entry may be gone.
                    let inFlightEdit =
                        inFlight.map {
                            $0.keys.contains(key) && ($0.verb == "SET" || $0.verb == "PARTIAL" || $0.verb == "BATCH")
                        } ?? false
                    let allowed: [[Int]?] =
                        mode.maxSize == Int.max && !inFlightEdit
                        ? [model[key], afterInFlight[key]]
                        : [model[key], afterInFlight[key], nil]
                    #expect(
                        allowed.contains { $0 == actual },
                        "kill \(round): \(key) holds \(actual ?? []), expected one of \(allowed)")
                }
                // The worker continues from this state after the next kill; the log must too.
                if mode.maxSize != Int.max { outcomes.underEviction += 1 }
                if let inFlight, inFlight.verb == "BATCH" {
                    // Record, key by key, what the cache decided for the batch in flight.
                    var line = ""
                    for key in inFlight.keys {
                        let actual = state[key]?.map(\.sequence)
                        if actual == afterInFlight[key] {
                            line += "B SET \(key) \(inFlight.sequence)\nC\n"
                        } else if actual == nil {
                            line += "B REMOVE \(key) 0\nC\n"
                        }
                    }
                    line += "B ABORTED - 0\nC\n"
                    let handle = try FileHandle(forWritingTo: mode.log)
                    try handle.seekToEnd()
                    try handle.write(contentsOf: Data(line.utf8))
                    try handle.close()
                } else if inFlight != nil {
                    // Record what the cache decided for the in-flight operation.
                    let key = inFlight?.key ?? ""
                    let actual = state[key]?.map(\.sequence)
                    let line: String
                    let exact = mode.maxSize == Int.max
                    if actual == afterInFlight[key] {
                        if exact { outcomes.committed += 1 }
                        line = "C\n"  // it committed
                    } else if actual == nil {
                        if exact { outcomes.dropped += 1 }
                        line = "B REMOVE \(key) 0\nC\n"  // dropped by recovery (or evicted)
                    } else {
                        if exact { outcomes.neverJournaled += 1 }
                        line = "B ABORTED - 0\nC\n"  // it never reached the journal
                    }
                    let handle = try FileHandle(forWritingTo: mode.log)
                    try handle.seekToEnd()
                    try handle.write(contentsOf: Data(line.utf8))
                    try handle.close()
                } else if mode.maxSize == Int.max {
                    outcomes.betweenOperations += 1
                }
                survived += 1
            }
            #expect(survived == Self.kills)
            print(
                "crash-kill: \(survived) kills survived, \(outcomes.underEviction) of them under eviction; without eviction, "
                    + "the operation in flight at the kill had committed \(outcomes.committed) times, was dropped by recovery "
                    + "\(outcomes.dropped), had not reached the journal \(outcomes.neverJournaled); between operations "
                    + "\(outcomes.betweenOperations); kills inside a packed batch (each found whole or absent) "
                    + "\(packedBatchesInFlight)")
        }
    }
}
