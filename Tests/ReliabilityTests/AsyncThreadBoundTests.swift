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

/// The async API's threads, counted in a process of their own: no other test's threads there.
@Suite struct AsyncThreadBoundTests {
    let directory = TemporaryDirectory()

    /// 10,000 concurrent async reads start no thread beyond the I/O pool (at most its limit)
    /// and Swift's cooperative pool (one per core); an unbounded queue would start hundreds.
    @Test func aBurstOfAsyncReadsAddsNoThreadsBeyondThePools() throws {
        let (status, output) = try runCommand([
            reliabilityWorker.path(percentEncoded: false), "async-burst", directory.url.path(percentEncoded: false),
        ])
        #expect(status == 0, "\(output)")
        func value(_ name: String) -> Int? {
            output.split(separator: "\n").first { $0.hasPrefix(name + " ") }.flatMap {
                Int($0.dropFirst(name.count + 1))
            }
        }
        let before = try #require(value("threads-before"))
        let peak = try #require(value("threads-peak"))
        let limit = try #require(value("pool-limit"))
        let cores = try #require(value("cores"))
        print(
            "async burst in a worker: \(before) threads before, \(peak) at most during (pool limit \(limit), \(cores) cores)"
        )
        #expect(value("misses") == 0)
        #expect(before > 0)
        #expect(peak <= before + limit + cores + 2)
    }
}
