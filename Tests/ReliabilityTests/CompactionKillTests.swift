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
    /// A worker compacts packed segments without pause (overwriting a tenth of its 200 keys
    /// between passes) and is killed at random moments, most of them inside a compaction: every
    /// reopen finds all 200 keys, each a whole pair of its own, and the segments' garbage gone
    /// after the next compaction. `SWIFTYCACHE_COMPACTION_KILLS` sets the count (default 30).
    @Suite(.tags(.slow), .fullRunOnly) struct CompactionKillTests {
        static let kills = ProcessInfo.processInfo.environment["SWIFTYCACHE_COMPACTION_KILLS"].flatMap(Int.init) ?? 30

        @Test func killedWhileCompactingNothingIsLostOrDuplicated() throws {
            let directory = TemporaryDirectory()
            var generator = SystemRandomNumberGenerator()
            for round in 0..<Self.kills {
                // Into the loop of compactions, then SIGKILL.
                let wasRunning = try killWorkerAtRandom(
                    ["compactor", directory.url.path(percentEncoded: false)], maximumDelay: 40_000, using: &generator)
                #expect(wasRunning, "round \(round): the compactor stopped by itself")
                let state = try CacheInvariants.check(
                    directory.url, allowWipe: false, storage: .packed(inlineLimit: 1024))
                #expect(state.count == 200, "round \(round): \(state.count) keys")
                for (key, slots) in state {
                    #expect(slots.count == 2 && slots[0].sequence == slots[1].sequence, "round \(round): \(key)")
                }
            }
        }
    }
}
