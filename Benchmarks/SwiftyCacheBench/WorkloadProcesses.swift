import Foundation

/// A run of several workloads, each in a process of its own, as an app meets the cache: a
/// workload's figures then do not depend on the heap, the page cache and the dirty pages the
/// workloads before it left behind. The parent runs this executable once per workload, in the
/// order a single process would run them, passes on every other option, lets each child print
/// its own rows, and merges their reports into one.
enum WorkloadProcesses {
    /// The workloads in the order they run.
    static let order = [
        "engine", "scaling", "reopen", "durability", "footprint", "save-profile", "object", "concurrency", "large",
        "crossover", "sqlite-notes", "observation", "schema", "processes", "warm-start", "memory-hits", "coder",
        "packed-profile", "memory-profile", "scale", "sqlite",
    ]

    /// Runs each of `workloads` in a child process with `arguments` (the options but
    /// `--workload` and `--json`), and returns their reports merged, or `nil` when a child
    /// failed (its own error is on standard error).
    static func run(_ workloads: Set<String>, arguments: [String], scratch: Scratch) throws -> Report? {
        var merged = Report(
            machine: machineDescription(), date: ISO8601DateFormatter().string(from: Date()),
            options: CommandLine.arguments.dropFirst().joined(separator: " "), rows: [], derived: [:],
            peakRSSMegabytes: 0)
        let reports = scratch.fresh("workload-reports")
        try FileManager.default.createDirectory(at: reports, withIntermediateDirectories: true)
        for workload in order where workloads.contains(workload) {
            let file = reports.appending(path: "\(workload).json")
            let child = Process()
            child.executableURL = URL(filePath: CommandLine.arguments[0])
            child.arguments = arguments + ["--workload", workload, "--json", file.path(percentEncoded: false)]
            try child.run()
            child.waitUntilExit()
            guard child.terminationReason == .exit, child.terminationStatus == 0 else {
                FileHandle.standardError.write(Data("swiftycache-bench: the \(workload) workload failed\n".utf8))
                return nil
            }
            let report = try JSONDecoder().decode(Report.self, from: Data(contentsOf: file))
            merged.rows += report.rows
            merged.derived.merge(report.derived) { _, new in new }
            merged.peakRSSMegabytes = max(merged.peakRSSMegabytes, report.peakRSSMegabytes)
        }
        return merged
    }

    /// `arguments` without `--workload` and `--json` and their values.
    static func passedOn(_ arguments: [String]) -> [String] {
        var kept: [String] = []
        var rest = arguments[...]
        while let argument = rest.popFirst() {
            if argument == "--workload" || argument == "--json" {
                _ = rest.popFirst()
            } else {
                kept.append(argument)
            }
        }
        return kept
    }
}
