import Foundation
import SwiftyCacheCore
import SwiftyCacheTestSupport
import Testing

/// Runs the built `notes-offline` binary as a subprocess, as a user would.
struct CLI {
    let cacheDirectory: URL

    struct Result {
        var status: Int32
        var stdout: String
        var stderr: String
    }

    /// The binary, built beside the test bundle (the test target depends on it).
    // #filePath: <root>/Tests/NotesOfflineTests/CLIRunner.swift
    static let executable = builtExecutable(
        "notes-offline",
        packageRoot: URL(filePath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent())

    /// Runs `arguments` with `--cache-dir` set, and waits for the exit (at most 60 s).
    func run(_ arguments: [String], withCacheDirectory: Bool = true, environment: [String: String] = [:]) throws
        -> Result
    {
        let process = try start(arguments, withCacheDirectory: withCacheDirectory, environment: environment)
        // Read both pipes to the end first, so a full pipe never blocks the child.
        let out = LockedState(Data())
        let group = DispatchGroup()
        let stdout = process.stdout
        DispatchQueue.global().async(group: group) {
            let data = stdout.readDataToEndOfFile()
            out.withLock { $0 = data }
        }
        let err = process.stderr.readDataToEndOfFile()
        group.wait()
        process.process.waitUntilExit()
        return Result(
            status: process.process.terminationStatus, stdout: String(decoding: out.withLock { $0 }, as: UTF8.self),
            stderr: String(decoding: err, as: UTF8.self))
    }

    struct Running {
        var process: Process
        var stdout: FileHandle
        var stderr: FileHandle
    }

    /// Starts `arguments` and returns at once; a watchdog ends it after 60 s.
    /// `environment` is added to this process's.
    func start(_ arguments: [String], withCacheDirectory: Bool = true, environment: [String: String] = [:]) throws
        -> Running
    {
        let process = Process()
        process.executableURL = Self.executable
        if !environment.isEmpty {
            process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        }
        process.arguments =
            arguments + (withCacheDirectory ? ["--cache-dir", cacheDirectory.path(percentEncoded: false)] : [])
        let stdout = Pipe()
        let stderr = Pipe()
        process.standardOutput = stdout
        process.standardError = stderr
        process.standardInput = FileHandle.nullDevice
        try process.run()
        let watched = process
        DispatchQueue.global().asyncAfter(deadline: .now() + 60) {
            if watched.isRunning { watched.terminate() }
        }
        return Running(process: process, stdout: stdout.fileHandleForReading, stderr: stderr.fileHandleForReading)
    }
}

/// Checks that a failure is one clear line on stderr, with no crash report.
func expectOneLineError(
    _ result: CLI.Result, containing text: String, status: Int32 = 1, sourceLocation: SourceLocation = #_sourceLocation
) {
    #expect(result.status == status, "exit status; stderr: \(result.stderr)", sourceLocation: sourceLocation)
    let lines = result.stderr.split(separator: "\n")
    #expect(lines.count == 1, "stderr: \(result.stderr)", sourceLocation: sourceLocation)
    #expect(
        result.stderr.hasPrefix("notes-offline: error: "), "stderr: \(result.stderr)", sourceLocation: sourceLocation)
    #expect(result.stderr.contains(text), "stderr: \(result.stderr)", sourceLocation: sourceLocation)
    #expect(
        !result.stderr.contains("Fatal error") && !result.stderr.contains("Backtrace"), sourceLocation: sourceLocation)
}
