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
    /// The disk-fault sweeps through `ObjectCache` with `syncsWrites`: a write-through `set`,
    /// write-back values and `save()` (one batch), `set(contentsOf:)` and removals over five
    /// keys, with the Nth `write` torn or the Nth `fsync` failing, for every N; then a power cut
    /// (`FaultInjectingFileSystem.crashCopy(of:powerCut:)`). Every key holds what its last
    /// call that returned left, or what a later call that threw meant.
    @Suite(.tags(.slow), .fullRunOnly) struct ObjectCacheDiskFaultSweepTests {
        typealias Intent = DurableWorkload.Intent

        static func intent(_ key: String, _ value: String?, returned: Bool) -> Intent {
            Intent(key: key, value: value.map { [Data($0.utf8)] }, returned: returned)
        }

        /// Runs the workload; returns each call's intents in order.
        static func run(_ cache: ObjectCache<String, String>) -> [Intent] {
            var intents: [Intent] = []
            for step in 0..<20 {
                let key = "k\(step % 5)"
                let value = "\(key)-\(step)"
                switch step % 4 {
                case 0:
                    let returned = (try? cache.set(value, forKey: key)) != nil
                    intents.append(intent(key, value, returned: returned))
                case 1:
                    let other = "k\((step + 1) % 5)"
                    cache.setUnsaved(value, forKey: key)
                    cache.setUnsaved("\(other)-\(step)", forKey: other)
                    let returned = (try? cache.save()) != nil
                    intents.append(intent(key, value, returned: returned))
                    intents.append(intent(other, "\(other)-\(step)", returned: returned))
                case 2:
                    let other = "k\((step + 3) % 5)"
                    let returned = (try? cache.set(contentsOf: [(key, value), (other, "\(other)-\(step)")])) != nil
                    intents.append(intent(key, value, returned: returned))
                    intents.append(intent(other, "\(other)-\(step)", returned: returned))
                default:
                    let returned = (try? cache.removeValue(forKey: key)) != nil
                    intents.append(intent(key, nil, returned: returned))
                }
            }
            return intents
        }

        @Test(arguments: [DiskLRUCache.Storage.files, .packed], ["torn write", "failed sync"])
        func everyReturnedCallSurvivesADiskFaultAndAPowerCut(storage: DiskLRUCache.Storage, fault: String) throws {
            var configuration = ObjectCacheConfiguration(memoryLimit: 2, storage: storage)
            configuration.syncsWrites = true
            var faults = 0
            for occurrence in 1... {
                let directory = TemporaryDirectory("object-fault-sweep")
                let fileSystem = FaultInjectingFileSystem()
                fileSystem.recordSyncs()
                let cache = try ObjectCache<String, String>(
                    directory: directory.url, configuration: configuration, fileSystem: fileSystem)
                if fault == "torn write" {
                    fileSystem.shortenWrite(occurrence: occurrence, thenFailingWith: ENOSPC)
                } else {
                    fileSystem.failCall(named: "fsync", occurrence: occurrence, errno: EIO)
                }
                let intents = Self.run(cache)
                let reached = fileSystem.injectedFaults > 0
                // The power goes while the cache is open: its files as the last syncs left them.
                let copy = try fileSystem.crashCopy(of: directory, powerCut: true)
                fileSystem.heal()
                try? cache.close()
                let reopened = try ObjectCache<String, String>(directory: copy.url, configuration: configuration)
                let context = "\(fault) \(occurrence) (\(storage))"
                for (key, states) in DurableWorkload.allowed(intents, storage: storage) {
                    let found = try reopened.value(forKey: key).map { [Data($0.utf8)] }
                    let calls = intents.filter { $0.key == key }.map {
                        "\(DurableWorkload.describe($0.value)) \($0.returned ? "returned" : "threw")"
                    }
                    #expect(
                        states.contains { $0 == found },
                        "\(context): \(key) holds \(DurableWorkload.describe(found)); its calls: \(calls)")
                }
                try reopened.close()
                guard reached else { break }
                faults += 1
            }
            #expect(faults > 10)
            print("ObjectCache disk-fault sweep: \(storage), \(fault): \(faults) faults, each followed by a power cut")
        }
    }
}
