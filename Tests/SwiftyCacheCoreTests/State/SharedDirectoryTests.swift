import Dispatch
import Foundation
import SwiftyCacheCore
import SwiftyCacheTestSupport
import Testing

/// `sharing: .processes`: several caches write one directory. Two caches in one process hold
/// separate descriptors, so their locks exclude each other as two processes' would.
@Suite(.tags(.concurrency)) struct SharedDirectoryTests {
    let directory = TemporaryDirectory()

    func open(
        maxSize: Int = 1 << 20, syncsWrites: Bool = false, segmentSize: Int64? = nil, compactsInBackground: Bool = true,
        fileSystem: FaultInjectingFileSystem? = nil
    ) throws -> DiskLRUCache {
        var options = DiskLRUCache.Options(syncsWrites: syncsWrites, storage: .packed)
        options.sharing = .processes
        options.compactsInBackground = compactsInBackground
        if let segmentSize { options.packedSegmentSize = segmentSize }
        if let fileSystem {
            return try DiskLRUCache(
                directory: directory.url, appVersion: testAppVersion, valueCount: 1, maxSize: maxSize,
                options: options, fileSystem: fileSystem)
        }
        return try DiskLRUCache(
            directory: directory.url, appVersion: testAppVersion, valueCount: 1, maxSize: maxSize, options: options)
    }

    func value(_ text: String) -> [Data] { [Data(text.utf8)] }

    func read(_ cache: DiskLRUCache, _ key: String) throws -> String? {
        try cache.data(forKey: key).map { String(decoding: $0[0], as: UTF8.self) }
    }

    @Test func aWriteOfOneCacheIsReadByTheOtherAtOnce() throws {
        let first = try open()
        let second = try open()
        try first.setData(value("one"), forKey: "a")
        #expect(try read(second, "a") == "one")
        try second.setData(value("two"), forKey: "a")
        #expect(try read(first, "a") == "two")
        try second.setData(value("three"), forKey: "b")
        _ = try first.removeValue(forKey: "b")
        #expect(try read(second, "b") == nil)
        #expect(first.count == 1)
        #expect(second.count == 1)
        #expect(first.size == 3)
        #expect(second.size == 3)
        try first.close()
        try second.close()
        let reopened = try open()
        #expect(try read(reopened, "a") == "two")
        #expect(try read(reopened, "b") == nil)
    }

    @Test func bothWriteInTurnAndEveryValueReopens() throws {
        let caches = [try open(segmentSize: 4096), try open(segmentSize: 4096)]
        var expected: [String: String] = [:]
        var generator = SplitMix(state: 11)
        for step in 0..<2_000 {
            let cache = caches[Int(generator.next() % 2)]
            let key = "k\(generator.next() % 200)"
            if generator.next() % 5 == 0 {
                _ = try cache.removeValue(forKey: key)
                expected[key] = nil
            } else {
                let text = "\(key)-\(step)-" + String(repeating: "x", count: Int(generator.next() % 300))
                try cache.setData(value(text), forKey: key)
                expected[key] = text
            }
        }
        for cache in caches {
            for (key, text) in expected { #expect(try read(cache, key) == text) }
            #expect(cache.count == expected.count)
        }
        for cache in caches { try cache.compact() }
        for cache in caches {
            for (key, text) in expected { #expect(try read(cache, key) == text) }
        }
        for cache in caches { try cache.close() }
        let reopened = try open()
        #expect(reopened.count == expected.count)
        for (key, text) in expected { #expect(try read(reopened, key) == text) }
        // A directory written this way opens as any packed directory.
        try reopened.close()
        let single = try DiskLRUCache(
            directory: directory.url, appVersion: testAppVersion, valueCount: 1, maxSize: 1 << 20,
            options: DiskLRUCache.Options(storage: .packed))
        for (key, text) in expected { #expect(try read(single, key) == text) }
    }

    @Test func oneBudgetForBoth() throws {
        let first = try open(maxSize: 20_000)
        let second = try open(maxSize: 20_000)
        for index in 0..<200 {
            let cache = index % 2 == 0 ? first : second
            try cache.setData([Data(repeating: 1, count: 500)], forKey: "k\(index)")
        }
        first.waitForBackgroundWork()
        second.waitForBackgroundWork()
        try first.flush()
        #expect(first.size <= 20_000)
        #expect(second.size == first.size)
        // The most recent writes of both are kept.
        #expect(try first.data(forKey: "k199") != nil)
        #expect(try second.data(forKey: "k198") != nil)
        #expect(try second.data(forKey: "k0") == nil)
    }

    @Test func aRebuildByOneIsFollowedByTheOther() throws {
        let first = try open()
        let second = try open()
        for index in 0..<3_000 { try first.setData(value("v\(index % 7)"), forKey: "k\(index % 50)") }
        try first.compact()
        #expect(try read(second, "k3") == "v\((2_950 + 3) % 7)")
        try second.setData(value("after"), forKey: "k3")
        try first.setData(value("again"), forKey: "k4")
        #expect(try read(first, "k3") == "after")
        #expect(try read(second, "k4") == "again")
        try first.close()
        try second.close()
        let reopened = try open()
        #expect(try read(reopened, "k3") == "after")
        #expect(try read(reopened, "k4") == "again")
        #expect(reopened.count == 50)
    }

    /// What a writer killed in the middle of its append leaves: `tail` after the journal's last
    /// line, and the mark of a holder at work in `journal.share`'s page (its fourth word, see
    /// the on-disk format), which it never cleared.
    private func leaveWhatAKilledWriterLeaves(_ tail: Data) throws {
        let handle = try FileHandle(forWritingTo: directory.url.appending(path: "journal"))
        try handle.seekToEnd()
        try handle.write(contentsOf: tail)
        try handle.close()
        let share = try FileHandle(forWritingTo: directory.url.appending(path: "journal.share"))
        try share.seek(toOffset: 24)
        try share.write(contentsOf: withUnsafeBytes(of: UInt64(1).littleEndian) { Data($0) })
        try share.close()
    }

    @Test func aTornLineOfAKilledWriterIsCutOff() throws {
        let first = try open()
        try first.setData(value("kept"), forKey: "a")
        let second = try open()
        try second.setData(value("second"), forKey: "c")
        try leaveWhatAKilledWriterLeaves(Data("CLEAN torn 12 3 4".utf8))
        // A cache that was open before: the mark makes it look at the journal, not trust the page.
        try first.setData(value("next"), forKey: "b")
        #expect(try read(second, "b") == "next")
        #expect(try read(second, "a") == "kept")
        #expect(try read(first, "c") == "second")
        let text = try String(contentsOf: directory.url.appending(path: "journal"), encoding: .utf8)
        #expect(!text.contains("torn"))
        // And one that opens after.
        try leaveWhatAKilledWriterLeaves(Data("CLEAN torn 12 3 4".utf8))
        let third = try open()
        try third.setData(value("third"), forKey: "d")
        #expect(try read(first, "d") == "third")
        try first.close()
        try second.close()
        try third.close()
        #expect(try !String(contentsOf: directory.url.appending(path: "journal"), encoding: .utf8).contains("torn"))
        let reopened = try open()
        #expect(try read(reopened, "b") == "next")
        #expect(try read(reopened, "d") == "third")
        #expect(reopened.recoveryReport.damagedJournalLines == 0)
    }

    /// A killed writer leaves a prefix of one of its lines (a batch's, a commit's) at the
    /// journal's end; random bytes stand for a hostile file. Neither costs the others a write,
    /// and neither traps or hangs.
    @Test func fuzzedTailsOfAKilledWriter() throws {
        var generator = SplitMix(state: 29)
        let journal = directory.url.appending(path: "journal")
        for round in 0..<60 {
            let first = try open()
            try first.setData(value("before-\(round)"), forKey: "kept")
            var batch = DiskLRUCache.WriteBatch()
            batch.setData(value("x"), forKey: "b1")
            batch.setData(value("y"), forKey: "b2")
            try first.write(batch)
            // The tail: a cut copy of the journal's last line, or random bytes.
            let text = try Data(contentsOf: journal)
            let lastLine = text.dropLast().split(separator: UInt8(ascii: "\n")).last ?? []
            var tail: [UInt8]
            if round % 2 == 0 {
                tail = Array(lastLine.prefix(Int(generator.next() % UInt64(max(1, lastLine.count)))))
            } else {
                tail = (0..<Int(generator.next() % 300)).map { _ in UInt8(truncatingIfNeeded: generator.next()) }
            }
            try leaveWhatAKilledWriterLeaves(Data(tail))
            do {
                let second = try open()
                try second.setData(value("after-\(round)"), forKey: "next")
                #expect(try read(first, "next") == "after-\(round)")
                #expect(try read(second, "kept") == "before-\(round)")
                try second.close()
            } catch let error as CacheError {
                // Random bytes with a line end may make a line the parser refuses: a clear error.
                #expect(round % 2 == 1, "round \(round): \(error)")
            }
            try first.close()
            // Whatever the tail, the directory reopens alone.
            let alone = try DiskLRUCache(
                directory: directory.url, appVersion: testAppVersion, valueCount: 1, maxSize: 1 << 20,
                options: DiskLRUCache.Options(storage: .packed))
            if round % 2 == 0 {
                #expect(
                    try alone.data(forKey: "kept").map { String(decoding: $0[0], as: UTF8.self) } == "before-\(round)")
                #expect(try alone.data(forKey: "next") != nil)
            }
            try alone.close()
        }
    }

    /// A set appends its record before it takes the directory's lock: while one cache's record
    /// is held inside its `write`, the other cache writes and reads (with the lock taken first,
    /// its set would wait for the held one and throw `directoryLocked` after 30 s).
    @Test func aSetWritesItsRecordBeforeTakingTheLock() throws {
        let faults = FaultInjectingFileSystem()
        let first = try open(fileSystem: faults)
        let second = try open()
        // (The segment exists: a set that must create one creates it under the lock.)
        try first.setData(value("warm"), forKey: "w")
        let long = String(repeating: "x", count: 400)
        let hold = faults.holdNextWrite(largerThan: 300)
        defer { hold.release() }
        let finished = DispatchSemaphore(value: 0)
        DispatchQueue.global().async {
            try? first.setData([Data(long.utf8)], forKey: "held")
            finished.signal()
        }
        #expect(hold.waitUntilHeld())
        try second.setData(value("meanwhile"), forKey: "m")
        #expect(try read(second, "held") == nil)
        hold.release()
        finished.wait()
        #expect(try read(second, "held") == long)
        #expect(try read(first, "m") == "meanwhile")
    }

    /// A set whose record was appended but whose lock could not be taken publishes nothing:
    /// the record is garbage no line names, in both caches and after a compaction.
    @Test func aSetThatCannotTakeTheLockPublishesNothing() throws {
        let faults = FaultInjectingFileSystem()
        let first = try open(fileSystem: faults)
        try first.setData(value("one"), forKey: "a")
        faults.failCall(named: "flock", occurrence: 1, errno: EIO)
        #expect(throws: CacheError.self) { try first.setData(value("two"), forKey: "a") }
        #expect(try read(first, "a") == "one")
        let second = try open()
        #expect(try read(second, "a") == "one")
        try first.setData(value("three"), forKey: "b")
        #expect(try read(second, "b") == "three")
        try second.compact()
        #expect(try read(first, "a") == "one")
        try first.close()
        try second.close()
        let reopened = try open()
        #expect(try read(reopened, "a") == "one")
        #expect(try read(reopened, "b") == "three")
    }

    /// Caches of another release, whose sharing protocol is another (the fifth word of
    /// `journal.share`'s page, see the on-disk format), have the directory open: an open beside
    /// them is refused; once they have closed it, an open alone makes this protocol the
    /// directory's.
    @Test func anOpenBesideCachesOfAnotherProtocolIsRefused() throws {
        let first = try open()
        try first.setData(value("one"), forKey: "a")
        let share = try FileHandle(forWritingTo: directory.url.appending(path: "journal.share"))
        try share.seek(toOffset: 32)
        try share.write(contentsOf: withUnsafeBytes(of: UInt64(7).littleEndian) { Data($0) })
        try share.close()
        do {
            _ = try open()
            Issue.record("a cache opened beside caches of another protocol")
        } catch let error as CacheError {
            #expect(error.code == .directoryLocked)
            #expect(error.message.contains("another release"))
        }
        try first.close()
        let alone = try open()
        let beside = try open()
        #expect(try read(beside, "a") == "one")
        try beside.setData(value("two"), forKey: "a")
        #expect(try read(alone, "a") == "two")
        try alone.close()
        try beside.close()
    }

    @Test func aSingleWriterAndASharingCacheExcludeEachOther() throws {
        let shared = try open()
        expectError(.directoryLocked) {
            _ = try DiskLRUCache(
                directory: directory.url, appVersion: testAppVersion, valueCount: 1, maxSize: 1 << 20,
                options: DiskLRUCache.Options(storage: .packed))
        }
        try shared.close()
        let single = try DiskLRUCache(
            directory: directory.url, appVersion: testAppVersion, valueCount: 1, maxSize: 1 << 20,
            options: DiskLRUCache.Options(storage: .packed))
        expectError(.directoryLocked) { _ = try open() }
        try single.close()
    }

    @Test func pinsOfOneHoldForTheOtherToo() throws {
        let first = try open(maxSize: 20_000)
        let second = try open(maxSize: 20_000)
        try first.setData([Data(repeating: 1, count: 500)], forKey: "kept")
        #expect(try first.pin("kept"))
        // The other cache evicts by size: it passes the pinned entry by.
        for index in 0..<200 { try second.setData([Data(repeating: 2, count: 500)], forKey: "k\(index)") }
        second.waitForBackgroundWork()
        try second.flush()
        #expect(try second.isPinned("kept"))
        #expect(try first.data(forKey: "kept") != nil)
        #expect(try first.unpin("kept"))
        for index in 200..<400 { try second.setData([Data(repeating: 2, count: 500)], forKey: "k\(index)") }
        second.waitForBackgroundWork()
        try second.flush()
        #expect(try !second.isPinned("kept"))
        #expect(try first.data(forKey: "kept") == nil)
    }

    @Test func fileStorageAndLargeValuesAreRefused() throws {
        var options = DiskLRUCache.Options(storage: .files)
        options.sharing = .processes
        expectError(.invalidConfiguration) {
            _ = try DiskLRUCache(
                directory: directory.url, appVersion: testAppVersion, valueCount: 1, maxSize: 1 << 20,
                options: options)
        }
        let cache = try open()
        expectError(.invalidConfiguration) {
            try cache.setData([Data(count: DiskLRUCache.Storage.defaultInlineLimit + 1)], forKey: "big")
        }
        #expect(try cache.data(forKey: "big") == nil)
        try cache.setData(value("small"), forKey: "small")
    }

    @Test func concurrentWritersOfBothKeepEveryLastValue() throws {
        let caches = [try open(segmentSize: 8192), try open(segmentSize: 8192)]
        let lastValues = LockedState<[String: String]>([:])
        let errors = LockedState<[String]>([])
        DispatchQueue.concurrentPerform(iterations: 4) { thread in
            let cache = caches[thread % 2]
            do {
                for step in 0..<300 {
                    let key = "t\(thread)-\(step % 40)"
                    let text = "\(thread)-\(step)"
                    try cache.setData([Data(text.utf8)], forKey: key)
                    lastValues.withLock { $0[key] = text }
                    // Read by the other cache once the write returned.
                    let seen = try caches[(thread + 1) % 2].data(forKey: key).map {
                        String(decoding: $0[0], as: UTF8.self)
                    }
                    if seen != text { errors.withLock { $0.append("\(key): \(seen ?? "nil") for \(text)") } }
                }
            } catch {
                errors.withLock { $0.append("\(error)") }
            }
        }
        #expect(errors.withLock { $0 } == [])
        for cache in caches {
            for (key, text) in lastValues.withLock({ $0 }) { #expect(try read(cache, key) == text) }
        }
    }
}
