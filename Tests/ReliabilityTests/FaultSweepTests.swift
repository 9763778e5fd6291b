import Foundation
import SwiftyCacheCodable
import SwiftyCacheCore
import SwiftyCacheTestSupport
import Testing

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

extension Slow {
    /// Fails the Nth file-system call of a representative workload, for every N the workload
    /// reaches, with each errno: every fault is a thrown error with context or absorbed, the process
    /// never traps, the cache stays usable, reopening is consistent, and no unsaved value is lost.
    @Suite(.tags(.slow), .fullRunOnly) struct FaultSweepTests {
        static let errnos: [Int32] = [ENOSPC, EIO, EACCES]

        /// An engine workload of checked values; returns the errors it saw, each with the public
        /// calls its attempt made (an error must name one of them, never a step inside).
        static func engineWorkload(_ cache: DiskLRUCache) -> [(error: any Error, calls: Set<CacheError.Operation>)] {
            var errors: [(error: any Error, calls: Set<CacheError.Operation>)] = []
            func attempt(_ calls: Set<CacheError.Operation>, _ body: () throws -> Void) {
                do { try body() } catch { errors.append((error, calls)) }
            }
            for step in 0..<12 {
                let key = "k\(step % 5)"
                attempt([.setData]) {
                    try cache.setData(
                        (0..<2).map { CheckedValue.make(key: key, slot: $0, sequence: step, fillerLength: step * 7) },
                        forKey: key)
                }
                if step % 3 == 0 {
                    attempt([.contains, .setPartialData]) {
                        if try cache.containsValue(forKey: key) {
                            try cache.setPartialData(
                                [1: CheckedValue.make(key: key, slot: 1, sequence: 100 + step, fillerLength: 3)],
                                forKey: key)
                        }
                    }
                }
                if step % 4 == 0 { attempt([.remove]) { try cache.removeValue(forKey: "k\((step + 2) % 5)") } }
                if step % 5 == 0, let editor = try? cache.edit(forKey: "e\(step)") {
                    attempt([.write, .commit]) {
                        try editor.setData(
                            CheckedValue.make(key: "e\(step)", slot: 0, sequence: step, fillerLength: 1), at: 0)
                        try editor.setData(
                            CheckedValue.make(key: "e\(step)", slot: 1, sequence: step, fillerLength: 1), at: 1)
                        try editor.commit()
                    }
                }
                attempt([.data]) { _ = try cache.data(forKey: key) }
            }
            attempt([.flush]) { try cache.flush() }
            attempt([.compact]) { try cache.compact() }
            return errors
        }

        /// Packed storage with a small inline limit and small segments: the workload's values
        /// go to records and to files, segments roll, and compaction runs at the end.
        static let packed = DiskLRUCache.Storage.packed(inlineLimit: 40)

        static func options(_ storage: DiskLRUCache.Storage) -> DiskLRUCache.Options {
            var options = DiskLRUCache.Options(storage: storage)
            options.packedSegmentSize = 512
            return options
        }

        @Test(arguments: errnos, [DiskLRUCache.Storage.files, packed])
        func engineSurvivesAFaultAtEveryCall(errno code: Int32, storage: DiskLRUCache.Storage) throws {
            var faults = 0
            for faultIndex in 1... {
                let directory = TemporaryDirectory("engine-sweep")
                let fileSystem = FaultInjectingFileSystem()
                let cache = try DiskLRUCache(
                    directory: directory.url, appVersion: 1, valueCount: 2, maxSize: 3_000,
                    options: Self.options(storage), fileSystem: fileSystem)
                fileSystem.failCall(number: faultIndex, errno: code)
                let errors = Self.engineWorkload(cache)
                let reached = fileSystem.injectedFaults > 0
                fileSystem.heal()
                for (error, calls) in errors {
                    // Every error is the cache's, and says which call failed and where.
                    let cacheError = try #require(error as? CacheError, "fault \(faultIndex): \(error)")
                    #expect(cacheError.operation.map(calls.contains) == true, "fault \(faultIndex): \(cacheError)")
                    if cacheError.code == .ioFailure { #expect(cacheError.path != nil && cacheError.cause != nil) }
                }
                // Still usable.
                try cache.setData(
                    [
                        CheckedValue.make(key: "after", slot: 0, sequence: 1, fillerLength: 1),
                        CheckedValue.make(key: "after", slot: 1, sequence: 1, fillerLength: 1),
                    ], forKey: "after")
                #expect(try cache.data(forKey: "after") != nil)
                try? cache.close()
                do {
                    try CacheInvariants.check(directory.url, storage: storage)
                } catch {
                    Issue.record("fault at call \(faultIndex) (\(code), \(storage)): \(error)")
                }
                guard reached else { break }
                faults += 1
            }
            #expect(faults > 100)
            print(
                "fault sweep: engine, \(storage), errno \(code): \(faults) faults injected, one per call of the workload"
            )
        }

        @Test(arguments: errnos, bothStorages)
        func writeBackTierLosesNoUnsavedValueAtAnyFault(errno code: Int32, storage: DiskLRUCache.Storage) throws {
            var faults = 0
            for faultIndex in 1... {
                let directory = TemporaryDirectory("objects-sweep")
                let fileSystem = FaultInjectingFileSystem()
                var expected: [String: String] = [:]
                do {
                    let cache = try ObjectCache<String, String>(
                        directory: directory.url, configuration: .init(memoryLimit: 3, storage: storage),
                        fileSystem: fileSystem)
                    fileSystem.failCall(number: faultIndex, errno: code)
                    for step in 0..<8 {
                        let key = "key\(step % 6)"
                        cache.setUnsaved("value \(step)", forKey: key)  // write-back; eviction from memory saves
                        expected[key] = "value \(step)"
                        if step % 3 == 2 {
                            do {
                                try cache.set("set \(step)", forKey: "direct\(step)")
                                expected["direct\(step)"] = "set \(step)"
                            } catch let error as ObjectCacheError {
                                #expect(error.key == "direct\(step)" && error.cause != nil)
                            }
                        }
                        if step == 5 { _ = try? cache.save() }
                    }
                    _ = try? cache.value(forKey: "key0")
                    fileSystem.heal()
                    // Nothing the subscript accepted was dropped: one save now persists it all.
                    try cache.save()
                    for (key, value) in expected {
                        #expect(try cache.value(forKey: key) == value, "fault \(faultIndex): \(key)")
                    }
                    try cache.close()
                }
                let reached = fileSystem.injectedFaults > 0
                let reopened = try ObjectCache<String, String>(
                    directory: directory.url, configuration: .init(storage: storage))
                for (key, value) in expected {
                    #expect(
                        try reopened.value(forKey: key) == value, "fault \(faultIndex) (\(code)): \(key) after reopen")
                }
                try reopened.close()
                guard reached else { break }
                faults += 1
            }
            // Packed storage makes fewer calls: one write per entry instead of a file's five.
            #expect(faults > (storage == .files ? 50 : 20))
            print("fault sweep: ObjectCache write-back, \(storage), errno \(code): \(faults) faults injected")
        }
    }
}
