import Foundation
import SwiftyCacheTestSupport
import Testing

@testable import SwiftyCacheCore

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

@Suite struct DeferredDirtyTests {
    let directory = TemporaryDirectory()

    /// `DIRTY` reaches the journal file before the first staged file is created, as the Java
    /// cache does: the staged file's creation fails here, and the journal already holds DIRTY.
    @Test func aOneShotWriteJournalsDirtyBeforeItsFirstStagedFile() throws {
        let fileSystem = FaultInjectingFileSystem()
        let cache = try DiskLRUCache(
            directory: directory.url, appVersion: testAppVersion, valueCount: 2, maxSize: 100, fileSystem: fileSystem)
        try cache.set("old", "A", "B")
        fileSystem.failCalls(named: ["open"], errno: EIO, pathContaining: ".tmp")
        expectError(.ioFailure) { try cache.set("new", "C", "D") }
        expectError(.ioFailure) { try cache.set("old", "E", "F") }
        fileSystem.heal()
        // A failed write of a new key ends with REMOVE, of an existing one with its old CLEAN line.
        try expectJournal(
            directory.url,
            ["DIRTY old", "CLEAN old 1 1", "DIRTY new", "REMOVE new", "DIRTY old", "CLEAN old 1 1"])
        #expect(try cache.strings("old") == ["A", "B"])
    }

    @Test func rebuildWritesCleanForAOneShotEditNotYetJournaled() throws {
        let cacheDirectory = CacheDirectory(fileSystem: SystemFileSystem(), path: directory.path)
        try cacheDirectory.create()
        var state = CacheState(
            directory: cacheDirectory,
            storage: FileStorage(directory: cacheDirectory, valueCount: 2, syncsWrites: false),
            journal: JournalWriter(
                directory: cacheDirectory, appVersion: testAppVersion, valueCount: 2, syncsWrites: false),
            maxSize: 100)
        let old = state.table.insert(key: "old", valueCount: 2)
        state.table.setReadable(old, true)
        state.table.setLengths(old, [1, 2])
        state.table.setEditor(old, 7)  // a one-shot edit in progress: DIRTY deferred
        let new = state.table.insert(key: "new", valueCount: 2)
        state.table.setEditor(new, 8)  // a new entry's one-shot edit: nothing journaled yet
        let edited = state.table.insert(key: "edited", valueCount: 2)
        state.table.setEditor(edited, 9)
        state.table.setDirtyJournaled(edited, true)  // an editor: DIRTY already out
        try state.rebuildJournal()
        #expect(try JournalFixture.bodyLines(in: directory.url) == ["CLEAN old 1 2", "DIRTY edited"])
    }

    @Test func valueFilePathsBuiltOnTheStackMatchTheNamingScheme() throws {
        let storage = FileStorage(
            directory: CacheDirectory(fileSystem: SystemFileSystem(), path: "/var/cache/my app"), valueCount: 2,
            syncsWrites: false)
        let longKey = String(repeating: "k", count: 120)
        for key in ["a", "key-1_x", longKey] {
            for slot in [0, 1, 9, 10, 99, 100, 12_345, Int.max] {
                for temporary in [false, true] {
                    let built = storage.withSlotPath(key, slot, temporary: temporary) { String(cString: $0) }
                    let expected = "/var/cache/my app/\(key).\(slot)" + (temporary ? ".tmp" : "")
                    #expect(built == expected)
                    #expect(built == storage.path(key: key, slot: slot, staged: temporary))
                }
            }
        }
    }
}
