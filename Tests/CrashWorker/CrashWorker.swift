import Foundation
import SwiftyCacheCore
import SwiftyCacheTestSupport

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Runs a random workload against a cache until it is killed, logging each operation to a
/// side log before it starts (`B ...`) and after it completes (`C`), with `fsync`, so the
/// crash test knows what was committed and what was in flight at the kill.
///
/// Usage: swiftycache-crash-worker DIRECTORY SIDE-LOG SEED SEQUENCE-BASE MAX-SIZE
/// (and the `open-rss` and `writer` modes below, for other reliability tests)
@main
enum CrashWorker {
    static func main() {
        let arguments = CommandLine.arguments
        if arguments.count == 3, arguments[1] == "open-rss" { openAndReportMemory(arguments[2]) }
        if arguments.count == 3, arguments[1] == "async-burst" { readInAsyncBurst(arguments[2]) }
        if arguments.count == 3, arguments[1] == "compactor" { compactForever(arguments[2]) }
        if arguments.count == 3, arguments[1] == "migrator" { migrateUntilKilled(arguments[2]) }
        if arguments.count >= 7, arguments[1] == "sharer" { shareUntilKilled(Array(arguments.dropFirst())) }
        if arguments.count == 4, arguments[1] == "shared-writer", let count = Int(arguments[3]) {
            writeSharedInTurn(arguments[2], count: count)
        }
        if arguments.count == 5, arguments[1] == "few-descriptors", let limit = Int(arguments[3]) {
            useManySegments(arguments[2], descriptorLimit: limit, maxOpenSegments: Int(arguments[4]))
        }
        if (4...6).contains(arguments.count), arguments[1] == "writer", let count = Int(arguments[3]) {
            writeEntries(
                arguments[2], commits: count, packed: arguments.count >= 5 && arguments[4] == "packed",
                waitsAfterReady: arguments.count == 6 && arguments[5] == "wait")
        }
        guard arguments.count == 6 || arguments.count == 7, let seed = UInt64(arguments[3]),
            let base = Int(arguments[4]), let maxSize = Int(arguments[5])
        else {
            FileHandle.standardError.write(
                Data("usage: swiftycache-crash-worker DIR LOG SEED SEQ-BASE MAX-SIZE [files|packed]\n".utf8))
            exit(2)
        }
        let log = open(arguments[2], O_WRONLY | O_CREAT | O_APPEND, 0o600)
        guard log >= 0 else { exit(2) }
        func record(_ line: String) {
            let bytes = Array((line + "\n").utf8)
            _ = bytes.withUnsafeBytes { write(log, $0.baseAddress, $0.count) }
            fsync(log)
        }
        // Packed: a small inline limit and small segments, so that values go both ways, segments
        // roll and compaction runs often (the FLUSH operation compacts too).
        let isPacked = arguments.count == 7 && arguments[6] == "packed"
        var options = DiskLRUCache.Options(storage: isPacked ? .packed(inlineLimit: 2048) : .files)
        options.packedSegmentSize = 64 << 10
        let cache: DiskLRUCache
        do {
            cache = try DiskLRUCache(
                directory: URL(filePath: arguments[1]), appVersion: 1, valueCount: 2, maxSize: maxSize,
                options: options)
        } catch {
            FileHandle.standardError.write(Data("open failed: \(error)\n".utf8))
            exit(4)
        }
        var generator = SplitMix(state: seed)
        var sequence = base
        while true {
            sequence += 1
            let key = "k\(generator.next() % 30)"
            let filler = Int(generator.next() % 3000)
            let choice = generator.next() % 100
            do {
                switch choice {
                case 0..<40:
                    record("B SET \(key) \(sequence)")
                    try cache.setData(
                        (0..<2).map { CheckedValue.make(key: key, slot: $0, sequence: sequence, fillerLength: filler) },
                        forKey: key)
                    record("C")
                case 40..<60:
                    guard try cache.containsValue(forKey: key) else { continue }
                    record("B PARTIAL \(key) \(sequence)")
                    do {
                        try cache.setPartialData(
                            [1: CheckedValue.make(key: key, slot: 1, sequence: sequence, fillerLength: filler)],
                            forKey: key)
                    } catch let error as CacheError where error.code == .entryNotFound {
                        // Evicted in the background since `contains`: the update did not apply.
                        record("B ABORTED - \(sequence)")
                    }
                    record("C")
                case 60..<68:
                    // Three keys in one batch, of their own pool: their values are always small
                    // enough to be inline, so that a packed batch is one unit (a key whose values
                    // are files is written one entry at a time, as documented).
                    var keys: [String] = []
                    while keys.count < 3 {
                        let other = "b\(generator.next() % 12)"
                        if !keys.contains(other) { keys.append(other) }
                    }
                    var batch = DiskLRUCache.WriteBatch()
                    for batchKey in keys {
                        batch.setData(
                            (0..<2).map {
                                CheckedValue.make(
                                    key: batchKey, slot: $0, sequence: sequence, fillerLength: filler % 500)
                            },
                            forKey: batchKey)
                    }
                    record("B BATCH \(keys.joined(separator: ",")) \(sequence)")
                    try cache.write(batch)
                    record("C")
                case 68..<75:
                    record("B REMOVE \(key) \(sequence)")
                    try cache.removeValue(forKey: key)
                    record("C")
                case 75..<95:
                    if let values = try cache.data(forKey: key) {
                        for (slot, value) in values.enumerated() {
                            guard let parsed = CheckedValue.parse(value), parsed.key == key, parsed.slot == slot else {
                                FileHandle.standardError.write(Data("corrupt read of \(key) slot \(slot)\n".utf8))
                                exit(3)
                            }
                        }
                    }
                default:
                    record("B FLUSH - \(sequence)")
                    try cache.flush()
                    if isPacked { try cache.compact() }
                    record("C")
                }
            } catch {
                FileHandle.standardError.write(Data("operation failed: \(error)\n".utf8))
                exit(5)
            }
        }
    }

    /// `open-rss DIR`: opens the cache in DIR, then prints what opening did and the process's
    /// peak resident memory (`outcome …`, `rss-kib N`), for the hostile-journal tests.
    static func openAndReportMemory(_ path: String) -> Never {
        var outcome: String
        do {
            let cache = try DiskLRUCache(directory: URL(filePath: path), appVersion: 1, valueCount: 2, maxSize: 1 << 20)
            outcome = cache.recoveryReport.wasWiped ? "wiped" : "kept \(cache.count)"
            try cache.close()
        } catch let error as CacheError {
            outcome = "threw \(error.code)"
        } catch {
            outcome = "threw \(error)"
        }
        var usage = rusage()
        #if os(Linux)
        getrusage(Int32(RUSAGE_SELF.rawValue), &usage)
        #else
        getrusage(RUSAGE_SELF, &usage)  // a plain Int32 in Darwin's headers
        #endif
        say("outcome \(outcome)")
        say("rss-kib \(usage.ru_maxrss)")
        exit(0)
    }

    /// `async-burst DIR`: 10,000 concurrent async reads of 50 keys, alone in this process;
    /// prints the process's thread count before (`threads-before N`), its peak during
    /// (`threads-peak N`), the I/O pool's limit and the cores (`pool-limit N`, `cores N`).
    static func readInAsyncBurst(_ path: String) -> Never {
        func processThreads() -> Int {
            (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task").count) ?? 0
        }
        Task {
            do {
                let cache = try DiskLRUCache(
                    directory: URL(filePath: path), appVersion: 1, valueCount: 1, maxSize: 1 << 30)
                for i in 0..<50 { try await cache.setData([Data("v\(i)".utf8)], forKey: "k\(i)") }
                let before = processThreads()
                let peak = LockedState(before)
                let misses = LockedState(0)
                try await withThrowingTaskGroup(of: Void.self) { group in
                    for i in 0..<10_000 {
                        group.addTask {
                            if try await cache.data(forKey: "k\(i % 50)") == nil { misses.withLock { $0 += 1 } }
                            if i % 250 == 0 {
                                let now = processThreads()
                                peak.withLock { $0 = max($0, now) }
                            }
                        }
                    }
                    try await group.waitForAll()
                }
                say("threads-before \(before)")
                say("threads-peak \(peak.withLock { $0 })")
                say("misses \(misses.withLock { $0 })")
                say("pool-limit \(IOThreadPool.shared.limit)")
                say("cores \(ProcessInfo.processInfo.activeProcessorCount)")
                exit(0)
            } catch {
                say("failed \(error)")
                exit(3)
            }
        }
        dispatchMain()
    }

    /// `compactor DIR`: in packed storage with 4 KiB segments, keeps 200 keys of self-checking
    /// pairs (creating them on the first run), then forever overwrites a tenth of them and
    /// compacts; prints `ready` once compaction is under way. The test kills it at random.
    static func compactForever(_ path: String) -> Never {
        do {
            var options = DiskLRUCache.Options(storage: .packed(inlineLimit: 1024))
            options.packedSegmentSize = 4 << 10
            options.compactsInBackground = false
            let cache = try DiskLRUCache(
                directory: URL(filePath: path), appVersion: 1, valueCount: 2, maxSize: 1 << 30, options: options)
            func write(_ index: Int, _ sequence: Int) throws {
                let key = "k\(index)"
                try cache.setData(
                    (0..<2).map {
                        CheckedValue.make(key: key, slot: $0, sequence: sequence, fillerLength: 20 + index % 60)
                    },
                    forKey: key)
            }
            for index in 0..<200 where try !cache.containsValue(forKey: "k\(index)") { try write(index, 0) }
            var sequence = 1
            var announced = false
            while true {
                for index in stride(from: sequence % 10, to: 200, by: 10) { try write(index, sequence) }
                sequence += 1
                if !announced {
                    say("ready")
                    announced = true
                }
                try cache.compact()
            }
        } catch {
            FileHandle.standardError.write(Data("compactor failed: \(error)\n".utf8))
            exit(7)
        }
    }

    /// `writer DIR COUNT`: commits COUNT full entries (both slots of one commit carry the same
    /// sequence number) over 20 keys, removing some, with journal compactions along the way;
    /// prints `ready` after the first commit and `done` at the end. The read-only tests read the
    /// directory meanwhile from another process.
    /// With `packed`, in packed storage with small segments, compacting every 500 commits.
    static func writeEntries(_ path: String, commits: Int, packed: Bool, waitsAfterReady: Bool = false) -> Never {
        do {
            var options = DiskLRUCache.Options(storage: packed ? .packed : .files)
            options.packedSegmentSize = 64 << 10
            let cache = try DiskLRUCache(
                directory: URL(filePath: path), appVersion: 1, valueCount: 2, maxSize: 1 << 30, options: options)
            for sequence in 1...max(commits, 1) {
                let key = "k\(sequence % 20)"
                if sequence % 7 == 0 {
                    try cache.removeValue(forKey: key)
                } else {
                    try cache.setData(
                        (0..<2).map {
                            CheckedValue.make(key: key, slot: $0, sequence: sequence, fillerLength: sequence % 700)
                        },
                        forKey: key)
                }
                if sequence == 1 {
                    say("ready")
                    // With `wait`, the reader says when it is watching (a line on standard input).
                    if waitsAfterReady { _ = readLine() }
                }
                if packed && sequence % 500 == 0 { try cache.compact() }
            }
            try cache.close()
            say("done")
            exit(0)
        } catch {
            FileHandle.standardError.write(Data("writer failed: \(error)\n".utf8))
            exit(6)
        }
    }

    /// Writes a line to standard output at once (no stdio buffering), for a parent that waits on it.
    static func say(_ line: String) {
        let bytes = Array((line + "\n").utf8)
        FileHandle.standardOutput.write(Data(bytes))
    }

    /// `few-descriptors DIR LIMIT MAX-OPEN`: lowers the process's descriptor limit to LIMIT, then
    /// opens the packed cache in DIR (written with 256-byte segments: hundreds of them), reads
    /// every key, writes and removes some, compacts, closes and reopens it after a crash.
    /// MAX-OPEN (a number, or `default`) overrides how many segments stay open. Prints
    /// `ok N` with the keys read, or the error, and exits 1 on any failure.
    static func useManySegments(_ directory: String, descriptorLimit: Int, maxOpenSegments: Int?) -> Never {
        var limit = rlimit(rlim_cur: rlim_t(descriptorLimit), rlim_max: rlim_t(descriptorLimit))
        #if canImport(Glibc)
        let resource = __rlimit_resource_t(RLIMIT_NOFILE.rawValue)
        #else
        let resource = RLIMIT_NOFILE
        #endif
        guard setrlimit(resource, &limit) == 0 else {
            print("setrlimit failed: \(errno)")
            exit(1)
        }
        var options = DiskLRUCache.Options(storage: .packed)
        options.packedSegmentSize = 256
        options.maxOpenSegments = maxOpenSegments
        let url = URL(filePath: directory)
        do {
            var read = 0
            for round in 0..<2 {
                let cache = try DiskLRUCache(
                    directory: url, appVersion: 1, valueCount: 2, maxSize: Int.max, options: options)
                for key in try cache.keys() {
                    guard let values = try cache.data(forKey: key), values.count == 2,
                        String(decoding: values[0], as: UTF8.self) == key
                    else {
                        print("wrong or missing value for \(key)")
                        exit(1)
                    }
                    read += 1
                }
                for i in 0..<50 {
                    try cache.setData([Data("new-\(round)-\(i)".utf8), Data(count: 100)], forKey: "new-\(round)-\(i)")
                    _ = try cache.removeValue(forKey: "key-\(round * 50 + i)")
                }
                try cache.compact()
                try cache.flush()
                if round == 0 { cache.simulateCrash() } else { try cache.close() }
            }
            print("ok \(read)")
            exit(0)
        } catch {
            print("failed: \(error)")
            exit(1)
        }
    }
}
