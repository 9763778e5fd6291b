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
    /// A disk filling up mid-write: the Nth `write` of a workload writes half its bytes and the
    /// next one fails, for every N the workload reaches. Then, with `syncsWrites`, the power is
    /// cut (each file keeps what its last sync covered); without, the process is killed (each
    /// file keeps what was written). Every call that returned survives: each key holds what its
    /// last returned call left, or what a call that threw after it meant to write, never an
    /// older value.
    @Suite(.tags(.slow), .fullRunOnly) struct ShortWriteSweepTests {
        /// What a call meant for one key: a value, or nothing (a removal).
        struct Intent {
            var key: String
            var value: [Data]?
            var returned: Bool
        }

        static func value(_ key: String, _ step: Int) -> [Data] {
            [Data("\(key)-\(step)-0".utf8), Data(String(repeating: "\(key)-\(step)-1 ", count: 1 + step % 4).utf8)]
        }

        /// Sets, removals and batches of both over five keys; returns each call's intents in order.
        static func workload(_ cache: DiskLRUCache) -> [Intent] {
            var intents: [Intent] = []
            for step in 0..<24 {
                let key = "k\(step % 5)"
                if step % 4 == 3 {
                    let other = "k\((step + 2) % 5)"
                    var batch = DiskLRUCache.WriteBatch()
                    batch.setData(value(key, step), forKey: key)
                    batch.removeValue(forKey: other)
                    let returned = (try? cache.write(batch)) != nil
                    intents.append(Intent(key: key, value: value(key, step), returned: returned))
                    intents.append(Intent(key: other, value: nil, returned: returned))
                } else if step % 5 == 4 {
                    let returned = (try? cache.removeValue(forKey: key)) != nil
                    intents.append(Intent(key: key, value: nil, returned: returned))
                } else {
                    let returned = (try? cache.setData(value(key, step), forKey: key)) != nil
                    intents.append(Intent(key: key, value: value(key, step), returned: returned))
                }
            }
            return intents
        }

        /// What each key may hold: what its last returned call left (nothing before any), or
        /// what a call that threw after it meant. In file storage a set that threw may also
        /// leave nothing: the Java layout keeps no earlier value once a rename replaced its files
        /// (packed storage goes back to the earlier record).
        static func allowed(_ intents: [Intent], storage: DiskLRUCache.Storage) -> [String: [[Data]?]] {
            var allowed: [String: [[Data]?]] = [:]
            for key in Set(intents.map(\.key)) {
                let mine = intents.filter { $0.key == key }
                let lastReturned = mine.lastIndex { $0.returned }
                var states: [[Data]?] = [lastReturned.map { mine[$0].value } ?? nil]
                for intent in mine[((lastReturned ?? -1) + 1)...] where !intent.returned {
                    states.append(intent.value)
                    if storage == .files { states.append(nil) }
                }
                allowed[key] = states
            }
            return allowed
        }

        static func describe(_ value: [Data]?) -> String {
            value.map { String(decoding: $0[0], as: UTF8.self) } ?? "nothing"
        }

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
                let intents = Self.workload(cache)
                let reached = fileSystem.injectedFaults > 0
                cache.simulateCrash()
                let cut = TemporaryDirectory("short-write-cut")
                for name in try FileManager.default.contentsOfDirectory(atPath: directory.path) {
                    let source = directory.appending(name)
                    guard (try? source.resourceValues(forKeys: [.isRegularFileKey]))?.isRegularFile == true else {
                        continue
                    }
                    // A power cut keeps what was synced; a kill, everything written.
                    let synced = fileSystem.syncedSize(ofFileAt: source.path(percentEncoded: false)) ?? 0
                    let size = syncsWrites ? Int(synced) : Int.max
                    try Data(contentsOf: source).prefix(size).write(to: cut.appending(name))
                }
                let reopened = try DiskLRUCache(
                    directory: cut.url, appVersion: 1, valueCount: 2, maxSize: Int.max, options: options)
                #expect(reopened.recoveryReport.wipeReason == nil, "write \(occurrence) (\(storage))")
                for (key, states) in Self.allowed(intents, storage: storage) {
                    let found = try reopened.data(forKey: key)
                    #expect(
                        states.contains { $0 == found },
                        """
                        write \(occurrence) torn (\(storage)): \(key) holds \(Self.describe(found)); its calls: \
                        \(intents.filter { $0.key == key }.map { "\(Self.describe($0.value)) \($0.returned ? "returned" : "threw")" })
                        """)
                }
                try reopened.close()
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
