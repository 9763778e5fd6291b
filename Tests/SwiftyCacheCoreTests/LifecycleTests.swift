import Foundation
import SwiftyCacheCore
import SwiftyCacheTestSupport
import Testing

@Suite struct LifecycleTests {
    let directory = TemporaryDirectory()

    @Test(arguments: bothStorages) func secondCacheOnSameDirectoryInThisProcessIsRefused(storage: DiskLRUCache.Storage)
        throws
    {
        let first = try openCache(directory.url, storage: storage)
        expectError(.directoryLocked) { try openCache(directory.url, storage: storage) }
        try first.close()
        let second = try openCache(directory.url, storage: storage)
        try second.set("a", "b", "c")
    }

    @Test(arguments: bothStorages) func secondCacheThroughAnotherPathToTheSameDirectoryIsRefused(
        storage: DiskLRUCache.Storage
    ) throws {
        let first = try openCache(directory.url, storage: storage)
        let alias = directory.url.deletingLastPathComponent().appending(
            path: directory.url.lastPathComponent + "-alias")
        try FileManager.default.createSymbolicLink(at: alias, withDestinationURL: directory.url)
        defer { try? FileManager.default.removeItem(at: alias) }
        expectError(.directoryLocked) { try openCache(alias, storage: storage) }
        try first.close()
        _ = try openCache(alias, storage: storage)
    }

    @Test(arguments: bothStorages) func lockIsReleasedWhenTheCacheIsReleased(storage: DiskLRUCache.Storage) throws {
        do {
            let first = try openCache(directory.url, storage: storage)
            try first.set("a", "b", "c")
        }
        let second = try openCache(directory.url, storage: storage)
        #expect(try second.strings("a") == ["b", "c"])
    }

    @Test(arguments: bothStorages) func cacheOpenInAnotherProcessIsRefused(storage: DiskLRUCache.Storage) throws {
        // flock(1) holds the lock file from another process until its stdin closes.
        try FileManager.default.createDirectory(at: directory.url, withIntermediateDirectories: true)
        let lockPath = directory.appending("journal.lock").path(percentEncoded: false)
        let holder = Process()
        holder.executableURL = URL(filePath: "/usr/bin/flock")
        holder.arguments = ["--exclusive", lockPath, "/bin/sh", "-c", "echo locked; read line"]
        let input = Pipe()
        let output = Pipe()
        holder.standardInput = input
        holder.standardOutput = output
        try holder.run()
        defer {
            try? input.fileHandleForWriting.close()
            holder.waitUntilExit()
        }
        // Wait (on a condition, not a clock) until the other process holds the lock.
        let line = output.fileHandleForReading.availableData
        #expect(String(decoding: line, as: UTF8.self).contains("locked"))
        expectError(.directoryLocked) { try openCache(directory.url, storage: storage) }
        try input.fileHandleForWriting.close()
        holder.waitUntilExit()
        _ = try openCache(directory.url, storage: storage)
    }

    @Test(arguments: bothStorages) func everyCallThrowsAfterCloseButSnapshotsStillRead(storage: DiskLRUCache.Storage)
        throws
    {
        let cache = try openCache(directory.url, storage: storage)
        try cache.set("a", "b", "c")
        let snapshot = try #require(try cache.snapshot(forKey: "a"))
        try cache.close()
        #expect(cache.isClosed)
        expectError(.cacheClosed) { try cache.snapshot(forKey: "a") }
        expectError(.cacheClosed) { try cache.edit(forKey: "a") }
        expectError(.cacheClosed) { try cache.set("a", "b", "c") }
        expectError(.cacheClosed) { try cache.removeValue(forKey: "a") }
        expectError(.cacheClosed) { try cache.flush() }
        expectError(.cacheClosed) { try cache.evictAll() }
        expectError(.cacheClosed) { try cache.keys() }
        expectError(.cacheClosed) { try cache.setMaxSize(5) }
        #expect(try snapshot.readString(at: 1) == "c")
        try cache.close()  // closing twice does nothing
    }

    @Test(arguments: bothStorages) func deleteRemovesTheCacheFilesAndTheDirectoryWhenNothingElseIsInIt(
        storage: DiskLRUCache.Storage
    ) throws {
        let cache = try openCache(directory.url, storage: storage)
        try cache.set("a", "b", "c")
        try cache.delete()
        #expect(cache.isClosed)
        #expect(!FileManager.default.fileExists(atPath: directory.path))
        let reopened = try openCache(directory.url, storage: storage)
        #expect(reopened.count == 0)
    }

    @Test(arguments: bothStorages) func deleteKeepsFilesTheCacheDidNotCreateAndTheirDirectory(
        storage: DiskLRUCache.Storage
    ) throws {
        let cache = try openCache(directory.url, storage: storage)
        try cache.set("a", "b", "c")
        try JournalFixture.writeFile("notes.0", "the user's", in: directory.url)
        try FileManager.default.createDirectory(at: directory.appending("photos"), withIntermediateDirectories: true)
        try cache.delete()
        #expect(try JournalFixture.fileNames(in: directory.url) == ["notes.0", "photos"])
        #expect(try JournalFixture.readFile("notes.0", in: directory.url) == "the user's")
    }

    @Test(arguments: bothStorages) func invalidConfigurationThrows(storage: DiskLRUCache.Storage) throws {
        expectError(.invalidConfiguration) { try openCache(directory.url, valueCount: 0, storage: storage) }
        expectError(.invalidConfiguration) { try openCache(directory.url, maxSize: 0, storage: storage) }
        expectError(.invalidConfiguration) { try openCache(directory.url, maxSize: -5, storage: storage) }
        expectError(.invalidConfiguration) {
            try DiskLRUCache(directory: URL(string: "https://example.com/x")!, appVersion: 1, valueCount: 1, maxSize: 1)
        }
    }

    @Test(arguments: bothStorages) func directoryPathThatIsAFileThrows(storage: DiskLRUCache.Storage) throws {
        let file = directory.appending("plain-file")
        try Data("x".utf8).write(to: file)
        expectError(.invalidConfiguration) { try openCache(file, storage: storage) }
        expectError(.invalidConfiguration) { try openCache(file.appending(path: "below"), storage: storage) }
    }

    @Test(arguments: bothStorages) func createsMissingDirectoriesPrivateToTheUser(storage: DiskLRUCache.Storage) throws
    {
        let nested = directory.appending("a/b/cache")
        let cache = try openCache(nested, storage: storage)
        try cache.set("k", "v", "w")
        let attributes = try FileManager.default.attributesOfItem(atPath: nested.path(percentEncoded: false))
        #expect((attributes[.posixPermissions] as? Int) == 0o700)
        // The value's file: its own in file storage, the segment in packed storage.
        let name = storage.inlineLimit == nil ? "k.0" : "segment-00000001.pack"
        let file = try FileManager.default.attributesOfItem(
            atPath: nested.appending(path: name).path(percentEncoded: false))
        #expect((file[.posixPermissions] as? Int) == 0o600)
    }

    @Test(arguments: bothStorages) func directoryDeletedUnderneathIsRecreatedOnNextWrite(storage: DiskLRUCache.Storage)
        throws
    {
        let cache = try openCache(directory.url, storage: storage)
        try cache.set("a", "a", "a")
        try FileManager.default.removeItem(at: directory.url)
        if storage.inlineLimit == nil {
            #expect(try cache.snapshot(forKey: "a") == nil)
        } else {
            // Packed: the segment is still open, so until the next write notices, a read
            // returns the value it held; never anything else.
            #expect(try cache.strings("a").map { $0 == ["a", "a"] } ?? true)
        }
        try cache.set("b", "b", "b")
        #expect(try cache.snapshot(forKey: "a") == nil)
        #expect(try cache.strings("b") == ["b", "b"])
        try cache.close()
        let reopened = try openCache(directory.url, storage: storage)
        #expect(try reopened.keys() == ["b"])
        #expect(reopened.size == 2)
    }

    @Test(arguments: bothStorages) func directoryDeletedDuringAnEditOfAnExistingEntry(storage: DiskLRUCache.Storage)
        throws
    {
        let cache = try openCache(directory.url, storage: storage)
        try cache.set("a", "a", "a")
        try cache.set("b", "b", "b")
        let editor = try #require(try cache.snapshot(forKey: "a")?.edit())
        try FileManager.default.removeItem(at: directory.url)
        try editor.setString("a2", at: 1)
        // Slot 0 went with the directory, so the entry cannot be completed.
        expectError(.incompleteEntry) { try editor.commit() }
        #expect(try cache.snapshot(forKey: "a") == nil)
        #expect(try cache.snapshot(forKey: "b") == nil)
        try cache.set("c", "c", "c")
        #expect(try cache.strings("c") == ["c", "c"])
    }

    @Test func valueFileDeletedOrTruncatedUnderneathIsAMissAndDropped() throws {
        let cache = try openCache(directory.url)
        try cache.set("a", "a", "aaa")
        try cache.set("b", "bb", "b")
        try FileManager.default.removeItem(at: directory.appending("a.1"))
        try Data("b".utf8).write(to: directory.appending("b.0"))  // shorter than journaled
        #expect(try cache.snapshot(forKey: "a") == nil)
        #expect(try cache.snapshot(forKey: "b") == nil)
        #expect(cache.size == 0)
        #expect(cache.statistics.missCount == 2)
        #expect(try JournalFixture.bodyLines(in: directory.url).suffix(2) == ["REMOVE a", "REMOVE b"])
        #expect(try cache.removeValue(forKey: "a") == false)
    }

    @Test func plantedSymlinksAreNeverFollowed() throws {
        let outside = TemporaryDirectory()
        let target = outside.appending("secret")
        try Data("secret".utf8).write(to: target)
        let cache = try openCache(directory.url)
        try cache.set("a", "a", "a")
        // In place of a committed value: reading does not follow it.
        try FileManager.default.removeItem(at: directory.appending("a.0"))
        try FileManager.default.createSymbolicLink(at: directory.appending("a.0"), withDestinationURL: target)
        #expect(try cache.snapshot(forKey: "a") == nil)
        // In place of a temporary file: writing does not follow it.
        try FileManager.default.createSymbolicLink(at: directory.appending("b.0.tmp"), withDestinationURL: target)
        try cache.set("b", "written", "here")
        #expect(try cache.strings("b") == ["written", "here"])
        #expect(try String(contentsOf: target, encoding: .utf8) == "secret")
        // Committing replaced the link itself, never the file it pointed to.
        try cache.set("a", "new", "value")
        #expect(try cache.strings("a") == ["new", "value"])
        #expect(try String(contentsOf: target, encoding: .utf8) == "secret")
    }

    @Test(arguments: bothStorages) func sizeMatchesValueFilesAfterReopenWithoutClose(storage: DiskLRUCache.Storage)
        throws
    {
        var cache: DiskLRUCache? = try openCache(directory.url, maxSize: 400, storage: storage)
        for i in 0..<60 {
            try cache?.set("k\(i % 25)", String(repeating: "x", count: i % 13), String(repeating: "y", count: i % 7))
            if i % 9 == 0 { try cache?.removeValue(forKey: "k\((i + 3) % 25)") }
            if i % 5 == 0 {
                let editor = try cache?.edit(forKey: "e\(i)")
                try editor?.setString("partial", at: 0)
            }
        }
        cache = nil  // no close: open editors stay DIRTY in the journal
        let reopened = try openCache(directory.url, maxSize: 400, storage: storage)
        #expect(reopened.size == (try storedValueBytes(reopened, in: directory.url, storage: storage)))
        #expect(try JournalFixture.fileNames(in: directory.url).allSatisfy { !$0.hasSuffix(".tmp") })
    }
}
