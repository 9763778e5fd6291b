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
    /// A sync that fails: the Nth `fsync` of the durable workload (``DurableWorkload``, with
    /// `syncsWrites`) fails with `EIO`, for every N the workload reaches, and the writer goes on
    /// calling; then the power is cut. What the failed sync should have covered is taken as
    /// dropped (zeros), as the kernel may drop it and report the next sync of the file a
    /// success. Every call that returned is durable; every call after the failure that needed
    /// the broken file threw or was made durable some other way.
    @Suite(.tags(.slow), .fullRunOnly) struct FailedSyncSweepTests {
        /// File storage alone, packed storage alone and shared (`sharing: .processes`).
        static let modes: [(DiskLRUCache.Storage, DiskLRUCache.Sharing)] = [
            (.files, .singleProcess), (.packed, .singleProcess), (.packed, .processes),
        ]

        @Test(arguments: modes)
        func everyReturnedCallSurvivesAFailedSyncAndAPowerCut(
            storage: DiskLRUCache.Storage, sharing: DiskLRUCache.Sharing
        ) throws {
            var options = DiskLRUCache.Options(syncsWrites: true, storage: storage)
            options.packedSegmentSize = 512
            options.sharing = sharing
            let faults = try DurableWorkload.sweep(
                options: options, powerCut: true, context: "failed sync (\(storage), \(sharing))"
            ) {
                fileSystem, occurrence in
                fileSystem.failCall(named: "fsync", occurrence: occurrence, errno: EIO)
            }
            #expect(faults > 20)
            print("failed-sync sweep: \(storage), \(sharing): \(faults) failed syncs, each followed by a power cut")
        }
    }
}
