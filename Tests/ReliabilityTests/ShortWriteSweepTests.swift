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
    /// A disk filling up mid-write: the Nth `write` of the workload (``DurableWorkload``) writes
    /// half its bytes and the next one fails, for every N the workload reaches. Then, with
    /// `syncsWrites`, the power is cut (each file keeps what its last sync covered); without, the
    /// process is killed (each file keeps what was written). Every call that returned survives:
    /// each key holds what its last returned call left, or what a call that threw after it
    /// meant to write, never an older value.
    @Suite(.tags(.slow), .fullRunOnly) struct ShortWriteSweepTests {
        @Test(arguments: [DiskLRUCache.Storage.files, .packed], [true, false])
        func everyReturnedCallSurvivesATornWriteAndACrash(storage: DiskLRUCache.Storage, syncsWrites: Bool) throws {
            var options = DiskLRUCache.Options(syncsWrites: syncsWrites, storage: storage)
            options.packedSegmentSize = 512
            var faults = 0
            for occurrence in 1... {
                let directory = TemporaryDirectory("short-write-sweep")
                let fileSystem = FaultInjectingFileSystem()
                fileSystem.recordSyncs()
                let cache = try DiskLRUCache(
                    directory: directory.url, appVersion: 1, valueCount: 2, maxSize: Int.max, options: options,
                    fileSystem: fileSystem)
                fileSystem.shortenWrite(occurrence: occurrence, thenFailingWith: ENOSPC)
                let intents = DurableWorkload.run(cache)
                let reached = fileSystem.injectedFaults > 0
                cache.simulateCrash()
                let copy = try DurableWorkload.crashCopy(of: directory, fileSystem: fileSystem, powerCut: syncsWrites)
                try DurableWorkload.check(
                    copy, options: options, intents: intents,
                    context: "write \(occurrence) torn (\(storage), syncsWrites \(syncsWrites))")
                guard reached else { break }
                faults += 1
            }
            #expect(faults > 40)
            print(
                "short-write sweep: \(storage), syncsWrites \(syncsWrites): \(faults) torn writes, each followed by "
                    + (syncsWrites ? "a power cut" : "a kill"))
        }
    }
}
