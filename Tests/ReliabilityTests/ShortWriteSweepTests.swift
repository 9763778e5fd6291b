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
            try sweep(storage: storage, syncsWrites: syncsWrites, sharing: .singleProcess)
        }

        /// The same in a directory opened for sharing (`sharing: .processes`): lines appended
        /// alongside other caches', under the shared operation lock.
        @Test(arguments: [true, false])
        func everyReturnedCallOfASharingCacheSurvivesATornWriteAndACrash(syncsWrites: Bool) throws {
            try sweep(storage: .packed, syncsWrites: syncsWrites, sharing: .processes)
        }

        func sweep(storage: DiskLRUCache.Storage, syncsWrites: Bool, sharing: DiskLRUCache.Sharing) throws {
            var options = DiskLRUCache.Options(syncsWrites: syncsWrites, storage: storage)
            options.packedSegmentSize = 512
            options.sharing = sharing
            let faults = try DurableWorkload.sweep(
                options: options, powerCut: syncsWrites,
                context: "torn write (\(storage), syncsWrites \(syncsWrites), \(sharing))"
            ) { fileSystem, occurrence in
                fileSystem.shortenWrite(occurrence: occurrence, thenFailingWith: ENOSPC)
            }
            #expect(faults > 40)
            print(
                "short-write sweep: \(storage), syncsWrites \(syncsWrites), \(sharing): \(faults) torn writes, each followed by "
                    + (syncsWrites ? "a power cut" : "a kill"))
        }
    }
}
