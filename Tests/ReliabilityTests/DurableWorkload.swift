import Foundation
import SwiftyCacheCore
import SwiftyCacheTestSupport
import Testing

/// The workload the disk-fault sweeps run (``Slow/ShortWriteSweepTests``,
/// ``Slow/FailedSyncSweepTests``): sets, removals and batches of both over five keys, what each
/// call meant, the directory as a crash leaves it, and the check that no call that returned was
/// lost.
enum DurableWorkload {
    /// What a call meant for one key: a value, or nothing (a removal).
    struct Intent {
        var key: String
        var value: [Data]?
        var returned: Bool
    }

    static func value(_ key: String, _ step: Int) -> [Data] {
        [Data("\(key)-\(step)-0".utf8), Data(String(repeating: "\(key)-\(step)-1 ", count: 1 + step % 4).utf8)]
    }

    /// Runs the workload on `cache`; returns each call's intents in order.
    static func run(_ cache: DiskLRUCache) -> [Intent] {
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

    /// What each key may hold: what its last returned call left (nothing before any), or what a
    /// call that threw after it meant. In file storage a set that threw may also leave nothing:
    /// the Java layout keeps no earlier value once a rename replaced its files (packed storage
    /// goes back to the earlier record).
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

    /// Sweeps the workload: for every N the workload reaches, `inject(fileSystem, N)` arms a
    /// fault, the workload runs, the directory is copied as a crash leaves it (a power cut or a
    /// kill) and checked. Returns how many faults were injected.
    static func sweep(
        options: DiskLRUCache.Options, powerCut: Bool, context: String,
        inject: (FaultInjectingFileSystem, Int) -> Void
    ) throws -> Int {
        var faults = 0
        for occurrence in 1... {
            let directory = TemporaryDirectory("fault-sweep")
            let fileSystem = FaultInjectingFileSystem()
            fileSystem.recordSyncs()
            let cache = try DiskLRUCache(
                directory: directory.url, appVersion: 1, valueCount: 2, maxSize: Int.max, options: options,
                fileSystem: fileSystem)
            inject(fileSystem, occurrence)
            let intents = run(cache)
            let reached = fileSystem.injectedFaults > 0
            cache.simulateCrash()
            let copy = try fileSystem.crashCopy(of: directory, powerCut: powerCut)
            try check(copy, options: options, intents: intents, context: "\(context) \(occurrence)")
            guard reached else { return faults }
            faults += 1
        }
        return faults
    }

    /// Reopens `copy` and checks every key against what the calls meant.
    static func check(
        _ copy: TemporaryDirectory, options: DiskLRUCache.Options, intents: [Intent], context: String
    ) throws {
        let reopened = try DiskLRUCache(
            directory: copy.url, appVersion: 1, valueCount: 2, maxSize: Int.max, options: options)
        #expect(reopened.recoveryReport.wipeReason == nil, "\(context)")
        for (key, states) in allowed(intents, storage: options.storage) {
            let found = try reopened.data(forKey: key)
            let calls = intents.filter { $0.key == key }.map {
                "\(describe($0.value)) \($0.returned ? "returned" : "threw")"
            }
            #expect(states.contains { $0 == found }, "\(context): \(key) holds \(describe(found)); its calls: \(calls)")
        }
        try reopened.close()
    }
}
