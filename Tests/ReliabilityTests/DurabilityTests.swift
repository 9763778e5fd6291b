import Foundation
import SwiftyCacheCore
import SwiftyCacheTestSupport
import Testing

@Suite struct DurabilityTests {
    let directory = TemporaryDirectory()

    @Test func syncingCommitsForcesValuesJournalAndDirectory() throws {
        let fileSystem = FaultInjectingFileSystem()
        let cache = try DiskLRUCache(
            directory: directory.url, appVersion: 1, valueCount: 2, maxSize: 1 << 20,
            options: DiskLRUCache.Options(syncsWrites: true), fileSystem: fileSystem)
        let before = fileSystem.calls(to: "fsync")
        try cache.setData([Data("a".utf8), Data("b".utf8)], forKey: "k")
        // Two value files, the journal, and the directory.
        #expect(fileSystem.calls(to: "fsync") - before == 4)
        #expect(try cache.data(forKey: "k") == [Data("a".utf8), Data("b".utf8)])
    }

    @Test func syncingPackedCommitsForcesTheSegmentAlone() throws {
        let fileSystem = FaultInjectingFileSystem()
        let cache = try DiskLRUCache(
            directory: directory.url, appVersion: 1, valueCount: 2, maxSize: 1 << 20,
            options: DiskLRUCache.Options(syncsWrites: true, storage: .packed), fileSystem: fileSystem)
        try cache.setData([Data("a".utf8), Data("b".utf8)], forKey: "first")
        let before = fileSystem.calls(to: "fsync")
        try cache.setData([Data("a".utf8), Data("b".utf8)], forKey: "k")
        // The segment (one record for both slots, logged with its key): the journal's line
        // follows unsynced, and an open after a crash reads the commit back from the log. No
        // name changed in the directory, whose sync the segment's creation made.
        #expect(fileSystem.calls(to: "fsync") - before == 1)
        #expect(try cache.data(forKey: "k") == [Data("a".utf8), Data("b".utf8)])
    }

    @Test(arguments: bothStorages)
    func withoutSyncingCommitsAndRemovalsForceNothing(storage: DiskLRUCache.Storage) throws {
        let fileSystem = FaultInjectingFileSystem()
        let cache = try DiskLRUCache(
            directory: directory.url, appVersion: 1, valueCount: 2, maxSize: 1 << 20,
            options: DiskLRUCache.Options(storage: storage), fileSystem: fileSystem)
        let before = fileSystem.calls(to: "fsync")
        for i in 0..<10 { try cache.setData([Data("a".utf8), Data("b".utf8)], forKey: "k\(i)") }
        for i in 0..<5 { #expect(try cache.removeValue(forKey: "k\(i)")) }
        try cache.flush()
        #expect(fileSystem.calls(to: "fsync") == before)
    }

    @Test(arguments: bothStorages)
    func syncingRemovalsAndEvictionsForcesTheJournal(storage: DiskLRUCache.Storage) throws {
        let fileSystem = FaultInjectingFileSystem()
        let cache = try DiskLRUCache(
            directory: directory.url, appVersion: 1, valueCount: 2, maxSize: 1 << 20,
            options: DiskLRUCache.Options(syncsWrites: true, storage: storage), fileSystem: fileSystem)
        for i in 0..<4 { try cache.setData([Data("a".utf8), Data("b".utf8)], forKey: "k\(i)") }
        var before = fileSystem.calls(to: "fsync")
        #expect(try cache.removeValue(forKey: "k0"))
        // The journal and the directory, before `remove` returns.
        #expect(fileSystem.calls(to: "fsync") - before == 2)
        before = fileSystem.calls(to: "fsync")
        try cache.evictAll()
        #expect(fileSystem.calls(to: "fsync") - before == 2)
        #expect(cache.count == 0)
    }

    @Test func failingFsyncIsAnErrorAndTheCacheRecovers() throws {
        let fileSystem = FaultInjectingFileSystem()
        let cache = try DiskLRUCache(
            directory: directory.url, appVersion: 1, valueCount: 2, maxSize: 1 << 20,
            options: DiskLRUCache.Options(syncsWrites: true), fileSystem: fileSystem)
        fileSystem.failCalls(named: ["fsync"], errno: EIO)
        expectError(.ioFailure) { try cache.setData([Data("a".utf8), Data("b".utf8)], forKey: "k") }
        fileSystem.heal()
        try cache.setData([Data("c".utf8), Data("d".utf8)], forKey: "k")
        try cache.close()
        try CacheInvariants.check(directory.url, checksValues: false)
    }
}
