import Dispatch
import Foundation
import SwiftyCacheTestSupport
import Testing

@testable import SwiftyCacheCore

/// A set in a shared directory applies the others' earlier lines, then itself, after the
/// operation lock (`CacheState+DeferredCatchUp`): the outcome is the one of applying them
/// first. The second cache does not look at the directory between the first one's writes and
/// its own set, so the set's hold finds those lines unread. No background compaction: the
/// caches write only when the test says.
extension SharedDirectoryTests {
    /// The other cache wrote the key (a new key, a new value of a known one, a removal) and
    /// this cache sets it before reading anything: its value wins everywhere, the sizes agree.
    @Test func aSetOverTheOthersUnreadWritesOfItsKeyKeepsItsValue() throws {
        let first = try open(compactsInBackground: false)
        let second = try open(compactsInBackground: false)
        try first.setData(value("known"), forKey: "known")
        try first.setData(value("removed"), forKey: "removed")
        #expect(try read(second, "known") == "known")
        // Unread by the second cache: a new key, a new value, a removal, and another key.
        try first.setData(value("first-new"), forKey: "new")
        try first.setData(value("first-known"), forKey: "known")
        _ = try first.removeValue(forKey: "removed")
        try first.setData(value("other"), forKey: "other")
        try second.setData(value("second-new"), forKey: "new")
        try second.setData(value("second-known-longer"), forKey: "known")
        try second.setData(value("second-removed"), forKey: "removed")
        for cache in [first, second] {
            #expect(try read(cache, "new") == "second-new")
            #expect(try read(cache, "known") == "second-known-longer")
            #expect(try read(cache, "removed") == "second-removed")
            #expect(try read(cache, "other") == "other")
            #expect(cache.count == 4)
            #expect(cache.size == "second-new".count + "second-known-longer".count + "second-removed".count + 5)
        }
        try first.close()
        try second.close()
        let reopened = try open(compactsInBackground: false)
        #expect(try read(reopened, "known") == "second-known-longer")
        #expect(reopened.size == "second-new".count + "second-known-longer".count + "second-removed".count + 5)
    }

    /// One cache writes a key at a time, the other sets a key the first one just wrote: each
    /// set of the second finds the first one's line of that key unread, in every interleaving
    /// of a random run, and both caches and a reopen end with the last value of every key.
    @Test func turnsOfSetsOverUnreadLinesKeepTheLastValues() throws {
        let caches = [
            try open(segmentSize: 4096, compactsInBackground: false),
            try open(segmentSize: 4096, compactsInBackground: false),
        ]
        var expected: [String: String] = [:]
        var generator = SplitMix(state: 37)
        for step in 0..<1_500 {
            let key = "k\(generator.next() % 40)"
            let text = "\(key)-\(step)-" + String(repeating: "y", count: Int(generator.next() % 200))
            switch generator.next() % 4 {
            case 0:
                _ = try caches[0].removeValue(forKey: key)
                try caches[1].setData(value(text), forKey: key)
            case 1:
                try caches[0].setData(value("first"), forKey: key)
                try caches[1].setData(value(text), forKey: key)
            case 2:
                try caches[1].setData(value(text), forKey: key)
            default:
                try caches[0].setData(value(text), forKey: key)
            }
            expected[key] = text
            if step % 300 == 150 { try caches[Int(generator.next() % 2)].compact() }
        }
        for cache in caches {
            for (key, text) in expected { #expect(try read(cache, key) == text, "\(key)") }
            #expect(cache.count == expected.count)
            #expect(cache.size == expected.values.reduce(0) { $0 + $1.utf8.count })
        }
        for cache in caches { try cache.close() }
        let reopened = try open(compactsInBackground: false)
        for (key, text) in expected { #expect(try read(reopened, key) == text, "\(key)") }
        #expect(reopened.size == expected.values.reduce(0) { $0 + $1.utf8.count })
    }

    /// A set that makes the cache evict applies the others' lines before it picks: the entry
    /// the other cache just wrote is the most recent one, not the eldest it was here.
    @Test func aSetThatEvictsSeesTheOthersWritesFirst() throws {
        let first = try open(maxSize: 300, compactsInBackground: false)
        let second = try open(maxSize: 300, compactsInBackground: false)
        try first.setData([Data(repeating: 1, count: 100)], forKey: "x")
        try first.setData([Data(repeating: 2, count: 100)], forKey: "y")
        #expect(second.count == 2)
        // "x" is the eldest in the second cache's view until it reads the first one's line.
        try first.setData([Data(repeating: 3, count: 100)], forKey: "x")
        try second.setData([Data(repeating: 4, count: 150)], forKey: "z")
        for cache in [first, second] {
            #expect(try cache.data(forKey: "x") == [Data(repeating: 3, count: 100)])
            #expect(try cache.data(forKey: "y") == nil)
            #expect(try cache.data(forKey: "z") == [Data(repeating: 4, count: 150)])
            #expect(cache.size == 250)
        }
    }

    /// One cache compacts over and over (its `MOVE` lines are what the other's sets find
    /// unread) while the other sets the same keys: every value read back is the last one set.
    @Test func setsOverUnreadMovesOfACompactionKeepTheirValues() throws {
        let writer = try open(segmentSize: 2048, compactsInBackground: false)
        let compactor = try open(segmentSize: 2048, compactsInBackground: false)
        let isDone = LockedState(false)
        let failures = LockedState<[String]>([])
        let lastValues = LockedState<[String: String]>([:])
        DispatchQueue.concurrentPerform(iterations: 2) { thread in
            do {
                if thread == 1 {
                    while !isDone.withLock({ $0 }) { try compactor.compact() }
                    return
                }
                defer { isDone.withLock { $0 = true } }
                for step in 0..<3_000 {
                    let key = "k\(step % 40)"
                    let text = "\(key)-\(step)-" + String(repeating: "z", count: step % 90)
                    try writer.setData(value(text), forKey: key)
                    lastValues.withLock { $0[key] = text }
                    let seen = try read(writer, key)
                    if seen != text { failures.withLock { $0.append("\(key): \(seen ?? "nil") for \(text)") } }
                }
            } catch {
                failures.withLock { $0.append("\(error)") }
            }
        }
        #expect(failures.withLock { $0 } == [])
        let expected = lastValues.withLock { $0 }
        for cache in [writer, compactor] {
            for (key, text) in expected { #expect(try read(cache, key) == text, "\(key)") }
            #expect(cache.size == expected.values.reduce(0) { $0 + $1.utf8.count })
        }
    }

    /// A set whose line cannot be written fails as a commit in one hold does (the key keeps
    /// the value before it), and the other cache's writes it had not read are applied all the
    /// same: the journal rebuilt from this cache's index after the failure keeps them. Under
    /// the shared lock, and in an exclusive hold with the catch-up deferred (`exclusive`: this
    /// cache's pins wait to be written, so the set may not append under the shared lock).
    @Test(arguments: [false, true]) func aSetWhoseLineFailsKeepsTheOthersWrites(exclusive: Bool) throws {
        let faults = FaultInjectingFileSystem()
        let first = try open(compactsInBackground: false)
        let second = try open(compactsInBackground: false, fileSystem: faults)
        try first.setData(value("old"), forKey: "c")
        // The second cache's segment exists: its next set writes its record, then its line.
        try second.setData(value("z"), forKey: "z")
        #expect(try read(second, "c") == "old")
        try first.setData(value("a"), forKey: "a")
        try first.setData(value("b"), forKey: "b")
        if exclusive { second.withState { $0.pinsGeneration &+= 1 } }
        // The record's write, then the line's.
        faults.failCall(named: "write", occurrence: 2, errno: EIO)
        #expect(throws: CacheError.self) { try second.setData(value("new"), forKey: "c") }
        #expect(faults.injectedFaults == 1)
        #expect(try read(second, "a") == "a")
        #expect(try read(second, "b") == "b")
        #expect(try read(second, "c") == "old")
        // The next write rebuilds the journal from this index: the other's values stay.
        try second.setData(value("d"), forKey: "d")
        for cache in [first, second] {
            #expect(try read(cache, "c") == "old")
            #expect(try read(cache, "a") == "a")
            #expect(try read(cache, "b") == "b")
            #expect(try read(cache, "d") == "d")
        }
        try first.close()
        try second.close()
        let reopened = try open(compactsInBackground: false)
        #expect(try read(reopened, "c") == "old")
        #expect(try read(reopened, "a") == "a")
        #expect(try read(reopened, "b") == "b")
        #expect(try read(reopened, "d") == "d")
    }
}
