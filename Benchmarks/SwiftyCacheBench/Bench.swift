import Foundation
import Synchronization

/// `swift run -c release swiftycache-bench [options]`: the engine and ObjectCache against the
/// file-system floor, measured in the same run, round by round.
struct Options {
    var count = 20_000
    var valueSizes = [1024, 65_536]
    var rounds = 5
    var workloads: Set<String> = [
        "engine", "scaling", "reopen", "object", "concurrency", "durability", "sqlite", "large", "schema", "warm-start",
        "processes",
    ]
    var scalingSizes = [1_000, 10_000, 100_000]
    /// `--footprint-sizes`, in MiB.
    var footprintSizes = [1, 8, 64]
    /// Whether `--scaling` was given (the scale workload has its own default sizes).
    var scalingSizesGiven = false
    var jsonPath: String?
    /// `--charts REPORT.json`: draw the charts of a report instead of measuring.
    var chartsReport: String?
    var chartsScale: String?
    var chartDirectory = "docs/charts"

    static let usage = """
        Usage: swiftycache-bench [--n N] [--value-size BYTES[,BYTES]] [--rounds R]
                                 [--workload engine,scaling,reopen,object,concurrency,durability,sqlite,large,packed-profile,scale,coder,sqlite-notes,memory-hits,observation,footprint,schema,warm-start,processes]
                                 [--footprint-sizes 1,8,64]
                                 [--scaling 1000,10000,100000]
                                 [--json FILE] [--quick]
               swiftycache-bench --charts REPORT.json [--scale-report SCALE.json] [--chart-dir DIR]
          --n            entries per engine and ObjectCache round (default 20000; 64 KiB values use N/10)
          --workload     several workloads run one after another, each in a process of its own
          --quick        a smoke run: N=200, 2 rounds, scaling at 100 and 1000, no sync() between workloads
          --workload scale  one packed cache grown to each --scaling size (default 10k, 100k, 1M),
                         each in a process of its own: memory, rates, reopen, bytes per entry
          --workload durability  durable and batched writes of typed notes against SQLite (FULL
                         and NORMAL) in the same rounds, four writer threads against one, and
                         the bytes a get writes (/proc/self/io)
          --workload footprint  a packed ObjectCache's allocated disk over its maxDiskSize under
                         churn, at each --footprint-sizes size in MiB (default 1,8,64)
          --workload save-profile  200 rounds of 500 write-back notes and save(), for a profiler
          --workload schema  reads of notes one schema version old against current ones, and
                         fetch-through hits against memory hits
          --workload warm-start  the first 1,000 reads of a launch (a fresh process), with and
                         without a warm start
          --workload processes  a directory several processes write (sharing): one process's
                         sets and gets against a single-process cache's, two processes against
                         one and against SQLite in two processes, and the delay of a change
                         from one process to another
          --charts       draws SVG charts (against SQLite, latency; scale with --scale-report)
                         from the JSON of earlier runs into --chart-dir (default docs/charts)
        """

    init(_ arguments: [String]) throws {
        var rest = arguments[...]
        func value(_ name: String) throws -> String {
            guard let value = rest.popFirst() else { throw UsageError("\(name) needs a value") }
            return value
        }
        func numbers(_ text: String, _ name: String) throws -> [Int] {
            let parsed = text.split(separator: ",").compactMap { Int($0) }
            guard !parsed.isEmpty, parsed.allSatisfy({ $0 > 0 }) else {
                throw UsageError("\(name) takes positive numbers")
            }
            return parsed
        }
        while let argument = rest.popFirst() {
            switch argument {
            case "--n": count = try numbers(try value(argument), argument)[0]
            case "--value-size": valueSizes = try numbers(try value(argument), argument)
            case "--rounds": rounds = try numbers(try value(argument), argument)[0]
            case "--scaling":
                scalingSizes = try numbers(try value(argument), argument)
                scalingSizesGiven = true
            case "--footprint-sizes": footprintSizes = try numbers(try value(argument), argument)
            case "--workload": workloads = Set(try value(argument).split(separator: ",").map(String.init))
            case "--json": jsonPath = try value(argument)
            case "--charts": chartsReport = try value(argument)
            case "--scale-report": chartsScale = try value(argument)
            case "--chart-dir": chartDirectory = try value(argument)
            case "--quick":
                count = 200
                rounds = 2
                scalingSizes = [100, 1_000]
                settlesDisk.store(false, ordering: .relaxed)
            case "--help", "-h":
                print(Self.usage)
                exit(0)
            default: throw UsageError("unknown option \(argument)")
            }
        }
    }
}

struct UsageError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

struct Report: Codable {
    struct Row: Codable {
        var workload: Figure
        var baseline: Figure?
        /// Time per operation of the workload over the baseline's (1.0 = as fast): the paired
        /// chunk median where the two ran alternately, else the ratio of median rates.
        var costRatio: Double?
    }
    var machine: String
    var date: String
    var options: String
    var rows: [Row]
    /// Ratios derived from several rows, such as the scaling targets.
    var derived: [String: Double]
    var peakRSSMegabytes: Double
}

func machineDescription() -> String {
    let cpu =
        (try? String(contentsOfFile: "/proc/cpuinfo", encoding: .utf8))?
        .split(separator: "\n").first { $0.hasPrefix("model name") }?
        .split(separator: ":").last?.trimmingCharacters(in: .whitespaces) ?? "unknown CPU"
    return
        "\(ProcessInfo.processInfo.activeProcessorCount) cores, \(cpu), \(ProcessInfo.processInfo.operatingSystemVersionString)"
}

func format(_ rate: Double) -> String {
    rate >= 1_000_000
        ? String(format: "%.2fM", rate / 1_000_000)
        : rate >= 1000 ? String(format: "%.1fk", rate / 1000) : String(format: "%.1f", rate)
}

@main
enum SwiftyCacheBench {
    static func main() async {
        do {
            let arguments = CommandLine.arguments
            if arguments.count == 4, arguments[1] == ObservationWorkload.writerFlag, let count = Int(arguments[2]) {
                try ObservationWorkload.writer(count: count, directory: URL(filePath: arguments[3]))
                exit(0)
            }
            if arguments.count == 4, arguments[1] == ScaleWorkload.childFlag, let count = Int(arguments[2]) {
                try ScaleWorkload.child(count: count, directory: URL(filePath: arguments[3]))
                exit(0)
            }
            if arguments.count == 3, arguments[1] == ScaleWorkload.openChildFlag {
                try ScaleWorkload.openChild(directory: URL(filePath: arguments[2]))
                exit(0)
            }
            if arguments.count == 5, arguments[1] == WarmStartWorkload.childFlag, let hot = Int(arguments[3]) {
                try await WarmStartWorkload.child(mode: arguments[2], hot: hot, directory: URL(filePath: arguments[4]))
                exit(0)
            }
            if arguments.count >= 2, arguments[1] == ProcessesWorkload.childFlag {
                try ProcessesWorkload.child(Array(arguments.dropFirst(2)))
                exit(0)
            }
            if arguments.count >= 2, arguments[1] == ProcessesWorkload.latencyFlag {
                try ProcessesWorkload.latencyChild(Array(arguments.dropFirst(2)))
                exit(0)
            }
            if arguments.count == 4, arguments[1] == ReopenWorkload.residentChildFlag {
                try ReopenWorkload.residentChild(storage: arguments[2], directory: URL(filePath: arguments[3]))
                exit(0)
            }
            if arguments.count == 3, arguments[1] == ScaleWorkload.readChildFlag {
                try ScaleWorkload.readChild(file: URL(filePath: arguments[2]))
                exit(0)
            }
            let options = try Options(Array(CommandLine.arguments.dropFirst()))
            if let report = options.chartsReport {
                for file in try Charts.write(report: report, scale: options.chartsScale, to: options.chartDirectory) {
                    print("wrote \(file)")
                }
                return
            }
            let unknown = options.workloads.subtracting(WorkloadProcesses.order)
            guard unknown.isEmpty else {
                throw UsageError("unknown workload \(unknown.sorted().joined(separator: ","))")
            }
            if options.workloads.count > 1 {
                try runInProcesses(options)
            } else {
                try await run(options)
            }
        } catch {
            FileHandle.standardError.write(Data("swiftycache-bench: \(error)\n\(Options.usage)\n".utf8))
            exit(2)
        }
    }

    /// Runs each workload of `options` in a process of its own (``WorkloadProcesses``).
    static func runInProcesses(_ options: Options) throws {
        let scratch = Scratch()
        defer { scratch.removeAll() }
        guard
            let report = try WorkloadProcesses.run(
                options.workloads, arguments: WorkloadProcesses.passedOn(Array(CommandLine.arguments.dropFirst())),
                scratch: scratch)
        else {
            scratch.removeAll()  // exit(_:) skips the defer
            exit(1)
        }
        print(String(format: "peak RSS of a workload's process: %.1f MiB", report.peakRSSMegabytes))
        if let path = options.jsonPath { try write(report, to: path) }
    }

    static func write(_ report: Report, to path: String) throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        try encoder.encode(report).write(to: URL(filePath: path))
        print("wrote \(path)")
    }

    static func run(_ options: Options) async throws {
        let scratch = Scratch()
        defer { scratch.removeAll() }
        var rows: [Report.Row] = []
        var derived: [String: Double] = [:]
        /// Records and prints figures derived from several rows, with `format` for the value.
        func addDerived(_ values: [(String, Double)], format: String) {
            for (name, value) in values {
                derived[name] = value
                print(name.padding(toLength: 101, withPad: " ", startingAt: 0) + String(format: format, value))
            }
        }
        func add(_ pairs: [(engine: Figure, floor: Figure?)]) {
            for (workload, baseline) in pairs {
                let ratio =
                    workload.pairedCostRatio ?? baseline.map { $0.opsPerSecond / max(workload.opsPerSecond, 1e-12) }
                let row = Report.Row(workload: workload, baseline: baseline, costRatio: ratio)
                rows.append(row)
                printRow(row)
            }
        }
        print("machine: \(machineDescription())")
        print(String(repeating: "-", count: 118))
        print(
            "workload".padding(toLength: 40, withPad: " ", startingAt: 0)
                + "ops/s (min-max)".padding(toLength: 28, withPad: " ", startingAt: 0)
                + "p50 µs   p99 µs   baseline ops/s   cost ratio (quartiles)")
        if options.workloads.contains("engine") {
            for size in options.valueSizes {
                let count = size > 4096 ? max(options.count / 10, 20) : options.count
                add(try EngineWorkloads(count: count, valueSize: size, rounds: options.rounds, scratch: scratch).run())
            }
        }
        if options.workloads.contains("scaling") {
            settle()
            let figures = try ScalingWorkloads(sizes: options.scalingSizes, rounds: options.rounds, scratch: scratch)
                .run()
            add(figures)
            addDerived(ScalingWorkloads.flatness(figures, sizes: options.scalingSizes), format: "%.2f×")
        }
        if options.workloads.contains("reopen") {
            settle()
            let (figures, ratios) = try ReopenWorkload(
                count: options.scalingSizes.max() ?? 100_000, rounds: max(options.rounds, 5), scratch: scratch
            ).run()
            add(figures)
            addDerived(ratios, format: "%.0f")
        }
        if options.workloads.contains("durability") {
            settle()
            add(
                try DurabilityWorkload(count: max(options.count / 20, 20), rounds: options.rounds, scratch: scratch)
                    .run())
            if SQLiteStore.isAvailable {
                settle()
                let (figures, ratios) = try DurabilityWorkloads(
                    count: options.count, rounds: options.rounds, scratch: scratch
                ).run()
                add(figures)
                addDerived(ratios, format: "%.2f")
            }
        }
        if options.workloads.contains("footprint") {
            settle()
            addDerived(
                try FootprintWorkload(sizes: options.footprintSizes.map { $0 << 20 }, scratch: scratch).run(),
                format: "%.2f")
        }
        if options.workloads.contains("save-profile") { try SaveProfileWorkload(scratch: scratch).run() }
        if options.workloads.contains("object") {
            settle()
            add(try await ObjectCacheWorkloads(count: options.count, rounds: options.rounds, scratch: scratch).run())
        }
        if options.workloads.contains("concurrency") {
            settle()
            let (figures, ratios) = try await ConcurrencyWorkloads(
                count: options.count, rounds: options.rounds, scratch: scratch
            ).run()
            add(figures)
            addDerived(ratios, format: "%.2f")
        }
        if options.workloads.contains("large") {
            settle()
            add(
                try LargeValueWorkloads(count: max(options.count / 10, 20), rounds: options.rounds, scratch: scratch)
                    .run())
        }
        if options.workloads.contains("crossover") {
            // Values kept in records (inline limit above them) against files, by size.
            for size in [4 << 10, 16 << 10, 64 << 10] {
                add(
                    try LargeValueWorkloads(
                        count: max(options.count / 10, 20), rounds: options.rounds, scratch: scratch, valueSize: size,
                        inlineLimit: 1 << 20
                    ).run())
            }
        }
        if options.workloads.contains("sqlite-notes"), SQLiteStore.isAvailable {
            settle()
            let (figures, ratios) = try SQLiteWorkloads(count: options.count, rounds: options.rounds, scratch: scratch)
                .noteWorkloads()
            add(figures)
            addDerived(ratios, format: "%.2f")
        }
        if options.workloads.contains("observation") {
            add(try await ObservationWorkload(count: options.count, rounds: options.rounds, scratch: scratch).run())
        }
        if options.workloads.contains("schema") {
            add(try await SchemaWorkloads(count: options.count, rounds: options.rounds, scratch: scratch).run())
        }
        if options.workloads.contains("processes") {
            settle()
            addDerived(
                try await ProcessesWorkload(count: options.count, rounds: options.rounds, scratch: scratch).run(),
                format: "%.2f")
        }
        if options.workloads.contains("warm-start") {
            addDerived(
                try await WarmStartWorkload(count: options.count, rounds: options.rounds, scratch: scratch).run(),
                format: "%.2f")
        }
        if options.workloads.contains("memory-hits") {
            add(try MemoryHitWorkload(count: options.count, rounds: options.rounds, scratch: scratch).run())
        }
        if options.workloads.contains("coder") {
            add(try CoderWorkload(count: options.count, rounds: options.rounds).run())
        }
        if options.workloads.contains("packed-profile") {
            for size in options.valueSizes {
                add(try PackedProfileWorkload(count: options.count, valueSize: size, scratch: scratch).run())
            }
        }
        if options.workloads.contains("memory-profile") {
            let (figures, ratios) = try await MemoryProfileWorkload(count: options.count, passes: 200, scratch: scratch)
                .run()
            add(figures)
            addDerived(ratios, format: "%.2f")
        }
        if options.workloads.contains("scale") {
            settle()
            let sizes = options.scalingSizesGiven ? options.scalingSizes : [10_000, 100_000, 1_000_000]
            addDerived(try ScaleWorkload(sizes: sizes, scratch: scratch).run(), format: "%.1f")
        }
        if options.workloads.contains("sqlite") {
            settle()
            let (figures, ratios) = try SQLiteWorkloads(count: options.count, rounds: options.rounds, scratch: scratch)
                .run()
            add(figures)
            addDerived(ratios, format: "%.2f")
        }
        let rss = peakRSSMegabytes()
        print(String(format: "peak RSS: %.1f MiB", rss))
        if let path = options.jsonPath {
            let report = Report(
                machine: machineDescription(), date: ISO8601DateFormatter().string(from: Date()),
                options: CommandLine.arguments.dropFirst().joined(separator: " "), rows: rows, derived: derived,
                peakRSSMegabytes: rss)
            try write(report, to: path)
        }
    }

    static func printRow(_ row: Report.Row) {
        let w = row.workload
        var line = w.name.padding(toLength: 40, withPad: " ", startingAt: 0)
        line += "\(format(w.opsPerSecond)) (\(format(w.opsPerSecondLow))-\(format(w.opsPerSecondHigh)))".padding(
            toLength: 28, withPad: " ", startingAt: 0)
        if w.operations == 1 {
            line += String(format: "%8.1f ms total", w.medianSeconds * 1000).padding(
                toLength: 34, withPad: " ", startingAt: 0)
        } else {
            line += String(format: "%7.2f  %7.2f   ", w.p50Microseconds ?? .nan, w.p99Microseconds ?? .nan)
            line += (row.baseline.map { format($0.opsPerSecond) } ?? "-").padding(
                toLength: 17, withPad: " ", startingAt: 0)
        }
        if let ratio = row.costRatio { line += String(format: "%.2f×", ratio) }
        if let low = w.pairedCostRatioLow, let high = w.pairedCostRatioHigh {
            line += String(format: " (%.2f–%.2f)", low, high)
        }
        print(line)
    }
}
