import Dispatch
import Foundation
import SwiftyCacheCore
import SwiftyCacheTestSupport
import Testing

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The worker executable the cross-process tests start.
let reliabilityWorker = builtExecutable(
    "swiftycache-crash-worker",
    packageRoot: URL(filePath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent())

/// Starts the worker with `arguments`, waits until it says `ready`, lets it run a random number
/// of microseconds up to `maximumDelay` (the moment of the kill is random by design: not a wait
/// for anything), and kills it with SIGKILL. Whether it was still running when killed.
func killWorkerAtRandom(
    _ arguments: [String], maximumDelay: UInt32, using generator: inout some RandomNumberGenerator
) throws -> Bool {
    let process = Process()
    process.executableURL = reliabilityWorker
    process.arguments = arguments
    let output = Pipe()
    process.standardOutput = output
    try process.run()
    waitUntilReady(output)
    usleep(UInt32.random(in: 0...maximumDelay, using: &generator))
    let wasRunning = process.isRunning
    kill(process.processIdentifier, SIGKILL)
    process.waitUntilExit()
    return wasRunning
}

/// Reads a worker's output until it says `ready` (or ends).
func waitUntilReady(_ output: Pipe) {
    var said = Data()
    while !String(decoding: said, as: UTF8.self).contains("ready") {
        let chunk = output.fileHandleForReading.availableData
        guard !chunk.isEmpty else { break }
        said.append(chunk)
    }
}

/// Runs a command to completion; its exit status and output.
@discardableResult
func runCommand(_ arguments: [String]) throws -> (status: Int32, output: String) {
    let process = Process()
    process.executableURL = URL(filePath: "/usr/bin/env")
    process.arguments = arguments
    let pipe = Pipe()
    process.standardOutput = pipe
    process.standardError = pipe
    try process.run()
    let output = pipe.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    return (process.terminationStatus, String(decoding: output, as: UTF8.self))
}
