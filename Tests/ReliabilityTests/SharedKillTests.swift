import Foundation
import SwiftyCacheCore
import SwiftyCacheTestSupport
import Testing

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Four processes write one directory in sharing mode (`sharer` in the crash worker): random
/// sets, batches, removals, reads and compactions over 40 shared keys, each process killed with
/// SIGKILL at a random moment while the others go on. After each round the directory is opened
/// and checked against the four logs: no value torn, mixed or another key's, and every key
/// holds what a linearizable store could (a write acknowledged before another began is never
/// what is left), so no acknowledged write is lost unless a later one replaced it.
@Suite(.tags(.slow), .fullRunOnly) struct SharedKillTests {
    static let workers = 4
    static var rounds: Int {
        ProcessInfo.processInfo.environment["SWIFTYCACHE_SHARED_KILL_ROUNDS"].flatMap(Int.init) ?? 5
    }

    /// One logged operation on one key.
    struct Operation {
        var sequence: Int?  // nil: a removal
        var began: UInt64
        var completed: UInt64?  // nil: in flight when the process was killed
    }

    /// The operations of one worker's log, per key; the number it completed.
    static func read(log: URL) throws -> (operations: [String: [Operation]], completed: Int) {
        var operations: [String: [Operation]] = [:]
        var pending: (keys: [String], operation: Operation)?
        var completed = 0
        for line in try String(contentsOf: log, encoding: .utf8).split(separator: "\n") {
            let fields = line.split(separator: " ")
            if fields.first == "B", fields.count == 5, let sequence = Int(fields[3]), let began = UInt64(fields[4]) {
                if let pending { for key in pending.keys { operations[key, default: []].append(pending.operation) } }
                let keys = fields[2].split(separator: ",").map(String.init)
                pending = (keys, Operation(sequence: fields[1] == "REMOVE" ? nil : sequence, began: began))
            } else if fields.first == "C", fields.count == 2, let time = UInt64(fields[1]), var done = pending {
                done.operation.completed = time
                for key in done.keys { operations[key, default: []].append(done.operation) }
                pending = nil
                completed += 1
            }
        }
        if let pending { for key in pending.keys { operations[key, default: []].append(pending.operation) } }
        return (operations, completed)
    }

    /// Whether `observed` (a sequence, or `nil` for no entry) is a state a linearizable store
    /// could leave after `operations` over `initial`: the write that left it must not have
    /// returned before an acknowledged write of the key began.
    static func isPossible(_ observed: Int?, initial: Int?, operations: [Operation]) -> Bool {
        var candidates = operations.filter { $0.sequence == observed }
        if initial == observed { candidates.append(Operation(sequence: observed, began: 0, completed: 0)) }
        return candidates.contains { candidate in
            guard let returned = candidate.completed else { return true }
            return !operations.contains { other in
                other.completed != nil && other.began > returned
            }
        }
    }

    /// Starts a `sharer` worker per log on `directory` (sequences from `round`); returns once
    /// each said it is ready, with the pipe of its error output.
    static func launchSharers(
        on directory: URL, logs: [URL], round: Int, maxSize: Int, syncsWrites: Bool,
        using generator: inout some RandomNumberGenerator
    ) throws -> (processes: [Process], errors: [Pipe]) {
        var processes: [Process] = []
        var errors: [Pipe] = []
        for (worker, log) in logs.enumerated() {
            _ = FileManager.default.createFile(atPath: log.path(percentEncoded: false), contents: nil)
            let process = Process()
            process.executableURL = reliabilityWorker
            process.arguments = [
                "sharer", directory.path(percentEncoded: false), log.path(percentEncoded: false),
                String(UInt64.random(in: 1...UInt64.max, using: &generator)),
                String((round + 1) * 10_000_000 + worker * 1_000_000), String(maxSize),
                syncsWrites ? "sync" : "async",
            ]
            let output = Pipe()
            let error = Pipe()
            process.standardOutput = output
            process.standardError = error
            try process.run()
            waitUntilReady(output)
            processes.append(process)
            errors.append(error)
        }
        return (processes, errors)
    }

    /// The operations of every log, per key; how many keys had one in flight at the end.
    static func operations(in logs: [URL]) throws -> (operations: [String: [Operation]], inFlight: Int) {
        var operations: [String: [Operation]] = [:]
        var inFlight = 0
        for log in logs {
            let (read, _) = try read(log: log)
            for (key, list) in read {
                operations[key, default: []] += list
                if list.contains(where: { $0.completed == nil }) { inFlight += 1 }
            }
        }
        return (operations, inFlight)
    }

    /// The sequence each key of `directory` holds, its structure checked first
    /// (``CacheInvariants``); a key whose slots are of two writes is a finding. `nil` when the
    /// directory does not check out (a finding too).
    static func observed(in directory: URL, round: Int, findings: inout [String]) -> [String: Int]? {
        let found: [String: [CheckedValue.Parsed]]
        do {
            found = try CacheInvariants.check(directory, storage: .packed(inlineLimit: 4096))
        } catch {
            findings.append("round \(round): \(error)")
            return nil
        }
        var observed: [String: Int] = [:]
        for (key, slots) in found {
            guard slots.count == 2, slots[0].sequence == slots[1].sequence else {
                findings.append("round \(round): \(key) holds slots of two writes: \(slots)")
                continue
            }
            observed[key] = slots[0].sequence
        }
        return observed
    }

    /// Checks what each key holds against the logs: a sequence some write of it wrote (or
    /// its sequence in `state`, before the round), and with `linearizable` a state a
    /// linearizable store could leave (``isPossible(_:initial:operations:)``).
    static func checkKeys(
        _ observed: [String: Int], against operations: [String: [Operation]], from state: [String: Int], round: Int,
        linearizable: Bool, findings: inout [String]
    ) {
        for key in Set(observed.keys).union(operations.keys).union(state.keys) {
            let list = operations[key] ?? []
            if let sequence = observed[key], sequence != state[key], !list.contains(where: { $0.sequence == sequence })
            {
                findings.append("round \(round): \(key) holds \(sequence), which no write of it wrote")
            }
            if linearizable && !isPossible(observed[key], initial: state[key], operations: list) {
                findings.append(
                    "round \(round): \(key) holds \(observed[key].map(String.init) ?? "nothing"), lost an acknowledged write"
                )
            }
        }
    }

    private func runRounds(maxSize: Int, syncsWrites: Bool, checksLinearizability: Bool) throws -> [String] {
        let root = TemporaryDirectory()
        let directory = root.appending("shared")
        var generator = SystemRandomNumberGenerator()
        var state: [String: Int] = [:]
        var findings: [String] = []
        var killedInside = 0
        for round in 0..<Self.rounds {
            let logs = (0..<Self.workers).map { root.appending("round\(round)-\($0).log") }
            let (processes, errors) = try Self.launchSharers(
                on: directory, logs: logs, round: round, maxSize: maxSize, syncsWrites: syncsWrites,
                using: &generator)
            // Each is killed once it completed its own random number of operations; the others
            // go on meanwhile, and meet what the killed one left.
            var targets = (0..<Self.workers).map { _ in Int.random(in: 50...500, using: &generator) }
            let deadline = Date().addingTimeInterval(60)
            while targets.contains(where: { $0 > 0 }) && Date() < deadline {
                for worker in 0..<Self.workers where targets[worker] > 0 {
                    guard processes[worker].isRunning else {
                        let said = String(decoding: errors[worker].fileHandleForReading.availableData, as: UTF8.self)
                        findings.append("round \(round): worker \(worker) stopped by itself: \(said)")
                        targets[worker] = 0
                        continue
                    }
                    if try Self.read(log: logs[worker]).completed >= targets[worker] {
                        kill(processes[worker].processIdentifier, SIGKILL)
                        processes[worker].waitUntilExit()
                        targets[worker] = 0
                    }
                }
                usleep(200)  // polling the workers' progress, not synchronising on time
            }
            for process in processes where process.isRunning {
                kill(process.processIdentifier, SIGKILL)
                process.waitUntilExit()
            }
            let (operations, inFlight) = try Self.operations(in: logs)
            killedInside += inFlight
            guard let observed = Self.observed(in: directory, round: round, findings: &findings) else { break }
            Self.checkKeys(
                observed, against: operations, from: state, round: round, linearizable: checksLinearizability,
                findings: &findings)
            if !checksLinearizability {
                let cache = try DiskLRUCache(
                    directory: directory, appVersion: 1, valueCount: 2, maxSize: Int.max,
                    options: .init(storage: .packed(inlineLimit: 4096)))
                // Whoever wrote past the limit evicted; at most a commit of each process beyond.
                if cache.size > maxSize + Self.workers * 3 * 2 * 700 {
                    findings.append("round \(round): \(cache.size) bytes held under a limit of \(maxSize)")
                }
                try cache.close()
            }
            state = observed
        }
        #expect(killedInside > 0, "no process was killed inside an operation")
        return findings
    }

    /// A sharing cache of one slot, as the `shared-writer` worker opens it.
    static func openShared(_ directory: URL) throws -> DiskLRUCache {
        var options = DiskLRUCache.Options(storage: .packed)
        options.sharing = .processes
        return try DiskLRUCache(directory: directory, appVersion: 1, valueCount: 1, maxSize: 1 << 30, options: options)
    }

    /// Another process sets a key 300 times; after each set returns, a read here (begun after
    /// it) returns that value: the read's check of the shared count of changes sees the write.
    @Test func aReadInAnotherProcessSeesEveryWriteThatReturned() throws {
        let root = TemporaryDirectory()
        let directory = root.appending("shared")
        let cache = try Self.openShared(directory)
        let process = Process()
        process.executableURL = reliabilityWorker
        process.arguments = ["shared-writer", directory.path(percentEncoded: false), "300"]
        let input = Pipe()
        let output = Pipe()
        process.standardInput = input
        process.standardOutput = output
        try process.run()
        var stale: [String] = []
        var pending = Data()
        var index = 0
        while index < 300 {
            let chunk = output.fileHandleForReading.availableData
            guard !chunk.isEmpty else { break }
            pending.append(chunk)
            while let newline = pending.firstIndex(of: UInt8(ascii: "\n")) {
                let line = String(decoding: pending[..<newline], as: UTF8.self)
                pending.removeSubrange(...newline)
                guard line == "wrote \(index)" else {
                    stale.append("worker said \(line)")
                    continue
                }
                let read = try cache.data(forKey: "k").map { String(decoding: $0[0], as: UTF8.self) }
                if read != "v\(index)" { stale.append("after v\(index): \(read ?? "nothing")") }
                index += 1
                input.fileHandleForWriting.write(Data("next\n".utf8))
            }
        }
        process.waitUntilExit()
        #expect(index == 300)
        #expect(stale == [])
        try cache.close()
    }

    /// A holder of the operation lock that never lets go (a process stopped inside an
    /// operation, as in a debugger: here the test holds `journal.share`): reads go on, a write
    /// waits 30 s and throws `directoryLocked` saying why, and changes nothing; once the lock
    /// is free, writes go on.
    @Test func aStoppedHolderMakesAWriteThrowAfterItsWait() throws {
        let root = TemporaryDirectory()
        let directory = root.appending("shared")
        let cache = try Self.openShared(directory)
        try cache.setData([Data("before".utf8)], forKey: "k")
        let holder = open(directory.appending(path: "journal.share").path(percentEncoded: false), O_RDWR)
        #expect(holder >= 0)
        #expect(flock(holder, LOCK_EX | LOCK_NB) == 0)
        #expect(try cache.data(forKey: "k").map { String(decoding: $0[0], as: UTF8.self) } == "before")
        let start = ContinuousClock.now
        do {
            try cache.setData([Data("during".utf8)], forKey: "k")
            Issue.record("a set went through a held lock")
        } catch let error as CacheError {
            #expect(error.code == .directoryLocked)
            #expect(error.message.contains("sharing this directory held its lock"))
            #expect(ContinuousClock.now - start >= .seconds(30))
        }
        close(holder)
        #expect(try cache.data(forKey: "k").map { String(decoding: $0[0], as: UTF8.self) } == "before")
        try cache.setData([Data("after".utf8)], forKey: "k")
        try cache.close()
        let reopened = try Self.openShared(directory)
        #expect(try reopened.data(forKey: "k").map { String(decoding: $0[0], as: UTF8.self) } == "after")
        try reopened.close()
    }

    @Test func fourProcessesKilledAtRandomLoseNoAcknowledgedWrite() throws {
        #expect(try runRounds(maxSize: Int.max, syncsWrites: false, checksLinearizability: true) == [])
    }

    @Test func withSyncsWrites() throws {
        #expect(try runRounds(maxSize: Int.max, syncsWrites: true, checksLinearizability: true) == [])
    }

    @Test func underEvictionTheLimitHoldsForAll() throws {
        #expect(try runRounds(maxSize: 30_000, syncsWrites: false, checksLinearizability: false) == [])
    }
}
