import Foundation
import SwiftyCacheCore

/// `--workload scale`: one packed cache grown to each size of `--scaling` (default 10k, 100k,
/// 1M; pass 10000000 for ten million), each size in a process of its own so that its resident
/// memory is its own. Keys of 64 characters, as `ObjectCache` makes them, and two slots of 60
/// and 280 bytes (about 340 bytes an entry, a small note and its envelope). Per size: resident
/// memory per entry (after the sets, minus before the first), the rate of sets (all, and the
/// last tenth alone) and of random gets (keys made in the order they are read; the median of
/// five passes below a million entries; with, as their floor, as many `pread`s of a record's
/// bytes at random places in the segments), a reopen after a clean close and one after a crash
/// (everything flushed to the OS, no clean marker: what a SIGKILL leaves) of the compacted
/// cache, one after a kill right after the gets (the journal as they left it), the bytes per
/// entry of the journal and of the saved index a clean close writes, after `compact()`, and
/// the peak resident memory during `compact()` (segments and journal rebuilt) and during a
/// reopen, over the memory they start from and end with.
struct ScaleWorkload {
    let sizes: [Int]
    let scratch: Scratch

    /// What a child measured, one line of `key=value` fields.
    static let childFlag = "--scale-child"
    /// A fresh process that opens a cache, prints how long the open took, and closes it.
    static let openChildFlag = "--open-child"

    /// The child of ``openChildFlag``: one timed open of the packed cache in `directory`, in a
    /// process that has done nothing else, as an app's launch meets it.
    static func openChild(directory: URL) throws {
        let run = try timedReopen(directory, options: DiskLRUCache.Options(storage: .packed))
        print(String(run.seconds * 1000))
    }

    /// A fresh process that reads a file whole into memory it allocates, and prints how long
    /// that took: the floor of loading an index from the file a clean close left.
    static let readChildFlag = "--read-child"

    /// The child of ``readChildFlag``.
    static func readChild(file: URL) throws {
        let start = nanoseconds()
        let handle = try FileHandle(forReadingFrom: file)
        let bytes = try handle.readToEnd() ?? Data()
        try handle.close()
        let seconds = Double(nanoseconds() - start) / 1e9
        keep(bytes.count)
        print(String(seconds * 1000))
    }

    /// Opens `directory` in a fresh process (``openChild(directory:)``): the milliseconds it took.
    static func openInFreshProcess(_ directory: URL) throws -> Double {
        try runChild([openChildFlag, directory.path(percentEncoded: false)])
    }

    /// Reads `file` whole in a fresh process (``readChild(file:)``): the milliseconds it took.
    static func readInFreshProcess(_ file: URL) throws -> Double {
        try runChild([readChildFlag, file.path(percentEncoded: false)])
    }

    /// Runs this benchmark with `arguments` and returns the number it prints (its only output).
    static func runChild(_ arguments: [String]) throws -> Double {
        let process = Process()
        process.executableURL = URL(filePath: CommandLine.arguments[0])
        process.arguments = arguments
        let pipe = Pipe()
        process.standardOutput = pipe
        try process.run()
        let output = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        guard process.terminationStatus == 0,
            let milliseconds = Double(output.trimmingCharacters(in: .whitespacesAndNewlines))
        else { throw UsageError("the child \(arguments) failed: \(output)") }
        return milliseconds
    }

    func run() throws -> [(String, Double)] {
        var derived: [(String, Double)] = []
        for size in sizes {
            let directory = scratch.fresh("scale-\(size)")
            let process = Process()
            process.executableURL = URL(filePath: CommandLine.arguments[0])
            process.arguments = [Self.childFlag, String(size), directory.path(percentEncoded: false)]
            let pipe = Pipe()
            process.standardOutput = pipe
            try process.run()
            let output = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            process.waitUntilExit()
            try? FileManager.default.removeItem(at: directory)
            guard process.terminationStatus == 0 else {
                throw UsageError("the scale child for \(size) entries failed: \(output)")
            }
            for field in output.split(whereSeparator: \.isWhitespace) {
                let parts = field.split(separator: "=")
                guard parts.count == 2, let value = Double(parts[1]) else { continue }
                let name = parts[0].replacingOccurrences(of: "_", with: " ")
                derived.append(("scale \(size): \(name)", value))
            }
        }
        return derived
    }

    /// The 64-character key of entry `index` (hex, as `ObjectCache`'s hashed names).
    static func key(_ index: Int) -> String {
        var state = UInt64(truncatingIfNeeded: index) &+ 0x9E37_79B9_7F4A_7C15
        var text = ""
        text.reserveCapacity(64)
        for _ in 0..<4 {
            state = (state ^ (state >> 30)) &* 0xBF58_476D_1CE4_E5B9
            state = (state ^ (state >> 27)) &* 0x94D0_49BB_1331_11EB
            state ^= state >> 31
            let hex = String(state, radix: 16)
            text += String(repeating: "0", count: 16 - hex.count) + hex
        }
        return text
    }

    /// The child: grows one cache in `directory` to `count` entries and prints what it measured.
    static func child(count: Int, directory: URL) throws {
        let values = [Data(repeating: 1, count: 60), Data(repeating: 2, count: 280)]
        let options = DiskLRUCache.Options(storage: .packed)
        let keys = (0..<count).map(key)
        let before = residentBytes()
        var cache = try DiskLRUCache(
            directory: directory, appVersion: 1, valueCount: 2, maxSize: Int.max, options: options)
        let lastTenth = count - count / 10
        var lastTenthStart = nanoseconds()
        let sets = try timed(count, perOperation: false) { index in
            if index == lastTenth { lastTenthStart = nanoseconds() }
            try cache.setData(values, forKey: keys[index])
        }
        let lastTenthSeconds = Double(nanoseconds() - lastTenthStart) / 1e9
        let resident = residentBytes()
        var generator = SeededGenerator(seed: 11)
        // The keys of the gets, made in the order they are read, as a caller makes each key when
        // it reads: taken at random from `keys`, each string's bytes would be a cache miss of the
        // benchmark's own (0.5 µs a get at ten million entries). Dropped after the gets. Below a
        // million entries a pass of gets takes milliseconds, which this machine's noise moves by
        // a quarter: the rate is the median of `passes` passes there, of one pass above.
        let passes = count < 1_000_000 ? 5 : 1
        let gets = try { () throws -> Run in
            let getKeys = (0..<count).map { _ in key(Int(generator.next() % UInt64(count))) }
            let runs = try (0..<passes).map { _ in
                try timed(count, perOperation: false) { keep(try cache.data(forKey: getKeys[$0])) }
            }
            return runs.sorted { $0.seconds < $1.seconds }[passes / 2]
        }()
        let floorRuns = (0..<passes).compactMap { _ in
            ScaleFloor.randomSegmentReads(in: directory, count: count, recordBytes: 352)
        }
        let floorReads = floorRuns.sorted { $0.seconds < $1.seconds }.dropFirst(floorRuns.count / 2).first
        // A clean close of the journal as the sets and gets left it (no `compact()`: users do
        // not call it before they quit), timed, then an open in a fresh process.
        let closing = try timed(1, perOperation: false) { _ in try cache.close() }
        cache = try DiskLRUCache.closedPlaceholder(in: directory)
        // Once what the close wrote has reached the disk (`sync`), as when an app is launched
        // again: the median of three, each process closing cleanly for the next.
        // Its floor: the same number of fresh processes reading the saved index whole, alternated.
        var freshOpens: [Double] = []
        var freshReads: [Double] = []
        for _ in 0..<3 {
            sync()
            freshReads.append(try readInFreshProcess(directory.appending(path: "journal.clean")))
            freshOpens.append(try openInFreshProcess(directory))
        }
        let freshOpenAfterClose = freshOpens.sorted()[1]
        let freshReadFloor = freshReads.sorted()[1]
        // A kill now: the journal as the sets and gets left it (flushed to the OS), replayed.
        // Every timed reopen runs with no other index in the process (the one before dropped,
        // its memory handed back), as in a process that starts and opens the cache.
        cache = try DiskLRUCache(directory: directory, appVersion: 1, valueCount: 2, maxSize: Int.max, options: options)
        try cache.flush()
        cache.simulateCrash()
        cache = try DiskLRUCache.closedPlaceholder(in: directory)
        let afterKill = try timedReopen(directory, options: options, keepingOpen: true)
        guard let reopened = afterKill.cache else { throw UsageError("the cache did not reopen") }
        cache = reopened
        // Compaction and the journal rebuild it ends with, against the memory they start from.
        let beforeCompaction = residentBytes()
        resetPeakResidentBytes()
        try cache.compact()
        let compactionPeak = peakResidentBytes() ?? 0
        try cache.close()
        let journal = fileSize(directory.appending(path: "journal"))
        let snapshot = fileSize(directory.appending(path: "journal.clean"))
        cache = try DiskLRUCache.closedPlaceholder(in: directory)
        let beforeReopen = residentBytes()
        resetPeakResidentBytes()
        cache = try DiskLRUCache(directory: directory, appVersion: 1, valueCount: 2, maxSize: Int.max, options: options)
        let reopenResident = residentBytes()
        let reopenPeak = peakResidentBytes() ?? 0
        try cache.close()
        cache = try DiskLRUCache.closedPlaceholder(in: directory)
        let afterClose = try timedReopen(directory, options: options)
        cache = try DiskLRUCache(directory: directory, appVersion: 1, valueCount: 2, maxSize: Int.max, options: options)
        try cache.flush()
        cache.simulateCrash()
        cache = try DiskLRUCache.closedPlaceholder(in: directory)
        let afterCrash = try timedReopen(directory, options: options)
        let fields: [(String, Double)] = [
            ("resident bytes per entry", Double(resident - before) / Double(count)),
            ("sets per second", Double(count) / sets.seconds),
            ("sets per second, last tenth", Double(count - lastTenth) / max(lastTenthSeconds, 1e-9)),
            ("random gets per second", Double(count) / gets.seconds),
            ("floor: random segment reads per second", floorReads.map { Double(count) / $0.seconds } ?? 0),
            ("close of the journal the sets left, ms", closing.seconds * 1000),
            ("open after that close in a fresh process, ms", freshOpenAfterClose),
            ("floor: the saved index read whole in a fresh process, ms", freshReadFloor),
            ("reopen after close, ms", afterClose.seconds * 1000),
            ("reopen after a crash, ms", afterCrash.seconds * 1000),
            ("reopen after a kill mid-workload, ms", afterKill.run.seconds * 1000),
            ("journal bytes per entry", Double(journal) / Double(count)),
            ("snapshot bytes per entry", Double(snapshot) / Double(count)),
            // The memory compaction adds at its peak, over what the index took after the sets.
            (
                "peak during compaction over steady",
                ratio(resident - before + max(0, compactionPeak - beforeCompaction), resident - before)
            ),
            ("peak during reopen over after", ratio(reopenPeak - beforeReopen, reopenResident - beforeReopen)),
        ]
        print(fields.map { "\($0.0.replacingOccurrences(of: " ", with: "_"))=\($0.1)" }.joined(separator: " "))
    }

    private static func ratio(_ numerator: Int, _ denominator: Int) -> Double {
        denominator > 0 ? Double(numerator) / Double(denominator) : 0
    }

    /// The process's peak resident memory since the last reset (`VmHWM`), in bytes.
    static func peakResidentBytes() -> Int? {
        guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8),
            let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmHWM:") }),
            let kilobytes = line.split(separator: " ", omittingEmptySubsequences: true).dropFirst().first.flatMap({
                Int($0)
            })
        else { return nil }
        return kilobytes * 1024
    }

    /// Resets the peak resident memory to the current one (Linux 4.0 and later).
    static func resetPeakResidentBytes() {
        try? Data("5".utf8).write(to: URL(filePath: "/proc/self/clear_refs"))
    }

    private static func fileSize(_ url: URL) -> Int {
        ((try? FileManager.default.attributesOfItem(atPath: url.path(percentEncoded: false)))?[.size] as? Int) ?? 0
    }
}

extension DiskLRUCache {
    /// A closed cache of a scratch directory beside `directory`, to hold in a variable while the
    /// cache that was there is dropped: it keeps no index.
    static func closedPlaceholder(in directory: URL) throws -> DiskLRUCache {
        let cache = try DiskLRUCache(
            directory: directory.deletingLastPathComponent().appending(path: "placeholder"), appVersion: 1,
            valueCount: 1, maxSize: 1)
        try cache.close()
        return cache
    }
}
