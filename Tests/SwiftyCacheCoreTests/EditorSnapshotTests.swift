import Dispatch
import Foundation
import SwiftyCacheCore
import SwiftyCacheTestSupport
import Testing

@Suite struct EditorSnapshotTests {
    let directory = TemporaryDirectory()

    @Test(arguments: bothStorages) func writeAndReadEntry(storage: DiskLRUCache.Storage) throws {
        let cache = try openCache(directory.url, storage: storage)
        let creator = try #require(try cache.edit(forKey: "k1"))
        try creator.setString("ABC", at: 0)
        try creator.setString("DE", at: 1)
        #expect(try creator.data(at: 0) == nil)
        try creator.commit()
        let snapshot = try #require(try cache.snapshot(forKey: "k1"))
        #expect(snapshot.key == "k1")
        #expect(try snapshot.readString(at: 0, encoding: .utf8) == "ABC")
        #expect(snapshot.length(at: 0) == 3)
        #expect(snapshot.length(at: 1) == 2)
        #expect(snapshot.lengths == [3, 2])
        expectError(.slotOutOfRange) { try snapshot.readData(at: 2) }
        expectError(.slotOutOfRange) { try snapshot.readData(at: -1) }
        snapshot.close()
        expectError(.snapshotClosed) { try snapshot.readData(at: 0) }
    }

    @Test(arguments: bothStorages) func newEntryWithAMissingSlotThrowsAndLeavesNothing(storage: DiskLRUCache.Storage)
        throws
    {
        let cache = try openCache(directory.url, storage: storage)
        let creator = try #require(try cache.edit(forKey: "k1"))
        try creator.setString("A", at: 1)
        expectError(.incompleteEntry) { try creator.commit() }
        #expect(try JournalFixture.fileNamesBesideSegments(in: directory.url) == ["journal", "journal.lock"])
        #expect(try cache.snapshot(forKey: "k1") == nil)
        #expect(cache.count == 0)
        try cache.set("k1", "B", "C")
        #expect(try cache.strings("k1") == ["B", "C"])
    }

    @Test(arguments: bothStorages) func partialUpdateKeepsOtherSlots(storage: DiskLRUCache.Storage) throws {
        let cache = try openCache(directory.url, storage: storage)
        try cache.set("k1", "A", "B")
        try cache.setPartialData([0: Data("C".utf8)], forKey: "k1")
        #expect(try cache.strings("k1") == ["C", "B"])
        let updater = try #require(try cache.edit(forKey: "k1"))
        #expect(try updater.data(at: 1) == Data("B".utf8))
        try updater.setString("D", at: 1)
        try updater.commit()
        #expect(try cache.strings("k1") == ["C", "D"])
        #expect(cache.size == 2)
    }

    @Test(arguments: bothStorages) func partialWriteOfMissingKeyThrows(storage: DiskLRUCache.Storage) throws {
        let cache = try openCache(directory.url, storage: storage)
        expectError(.entryNotFound) { try cache.setPartialData([0: Data("x".utf8)], forKey: "missing") }
        expectError(.slotOutOfRange) { try cache.setPartialData([2: Data("x".utf8)], forKey: "missing") }
        #expect(try cache.snapshot(forKey: "missing") == nil)
        #expect(try JournalFixture.bodyLines(in: directory.url) == [])
    }

    @Test(arguments: bothStorages) func wrongValueCountAndSlotOutOfRangeThrow(storage: DiskLRUCache.Storage) throws {
        let cache = try openCache(directory.url, storage: storage)
        expectError(.wrongValueCount) { try cache.setData([Data()], forKey: "k") }
        expectError(.wrongValueCount) { try cache.setData([Data(), Data(), Data()], forKey: "k") }
        let editor = try #require(try cache.edit(forKey: "k"))
        expectError(.slotOutOfRange) { try editor.setData(Data(), at: 2) }
        expectError(.slotOutOfRange) { try editor.setData(Data(), at: -1) }
        expectError(.slotOutOfRange) { try editor.data(at: 5) }
        editor.abort()
    }

    @Test(arguments: bothStorages) func secondEditorOnSameKeyIsRefused(storage: DiskLRUCache.Storage) throws {
        let cache = try openCache(directory.url, storage: storage)
        let first = try #require(try cache.edit(forKey: "k1"))
        #expect(try cache.edit(forKey: "k1") == nil)
        expectError(.editInProgress) { try cache.set("k1", "a", "b") }
        try cache.set("k2", "other", "key")  // other keys are unaffected
        first.abort()
        #expect(try cache.edit(forKey: "k1") != nil)
    }

    @Test(arguments: bothStorages) func editorDroppedWithoutCommitAborts(storage: DiskLRUCache.Storage) throws {
        let cache = try openCache(directory.url, storage: storage)
        try cache.set("k1", "A", "B")
        do {
            let editor = try #require(try cache.edit(forKey: "k1"))
            try editor.setString("changed", at: 0)
        }
        #expect(try cache.strings("k1") == ["A", "B"])
        #expect(try cache.edit(forKey: "k1") != nil)  // released
        #expect(!JournalFixture.fileExists("k1.0.tmp", in: directory.url))
    }

    @Test(arguments: bothStorages) func finishedEditorCannotBeUsed(storage: DiskLRUCache.Storage) throws {
        let cache = try openCache(directory.url, storage: storage)
        let editor = try #require(try cache.edit(forKey: "k1"))
        try editor.setString("A", at: 0)
        try editor.setString("B", at: 1)
        try editor.commit()
        expectError(.editorFinished) { try editor.commit() }
        expectError(.editorFinished) { try editor.setString("C", at: 0) }
        editor.abort()  // a no-op
        #expect(try cache.strings("k1") == ["A", "B"])
    }

    @Test(arguments: bothStorages) func snapshotReadsValuesAsTheyWereWhenTaken(storage: DiskLRUCache.Storage) throws {
        let cache = try openCache(directory.url, storage: storage)
        try cache.set("k1", "AAaa", "BBbb")
        let old = try #require(try cache.snapshot(forKey: "k1"))
        let reader = try old.reader(at: 0)
        #expect(try reader.read(upToCount: 2) == Data("AA".utf8))
        try cache.set("k1", "CCcc", "DDdd")
        #expect(try cache.strings("k1") == ["CCcc", "DDdd"])
        #expect(try reader.read(upToCount: 10) == Data("aa".utf8))
        #expect(try reader.read(upToCount: 10).isEmpty)
        #expect(try old.readString(at: 1) == "BBbb")
        try cache.removeValue(forKey: "k1")
        #expect(try old.readString(at: 0) == "AAaa")
    }

    @Test(arguments: bothStorages) func snapshotEditOnlyWhileUnchanged(storage: DiskLRUCache.Storage) throws {
        let cache = try openCache(directory.url, storage: storage)
        try cache.set("a", "a", "a")
        let snapshot = try #require(try cache.snapshot(forKey: "a"))
        let aborted = try #require(try snapshot.edit())
        aborted.abort()
        let editor = try #require(try snapshot.edit())
        try editor.setString("a2", at: 1)
        try editor.commit()
        #expect(try cache.strings("a") == ["a", "a2"])
        #expect(try snapshot.edit() == nil)  // committed since
        let fresh = try #require(try cache.snapshot(forKey: "a"))
        try cache.removeValue(forKey: "a")
        try cache.set("a", "new", "entry")
        #expect(try fresh.edit() == nil)  // removed and recreated since
    }

    @Test(arguments: bothStorages) func streamingWriteAndReadOfALargeValue(storage: DiskLRUCache.Storage) throws {
        let cache = try openCache(directory.url, storage: storage)
        let chunk = Data((0..<65_536).map { UInt8(truncatingIfNeeded: $0 &* 31) })
        let editor = try #require(try cache.edit(forKey: "big"))
        try editor.write(at: 0) { writer in
            for _ in 0..<40 { try writer.write(chunk) }
            #expect(writer.count == 40 * chunk.count)
        }
        try editor.setString("meta", at: 1)
        try editor.commit()
        let snapshot = try #require(try cache.snapshot(forKey: "big"))
        #expect(snapshot.length(at: 0) == 40 * chunk.count)
        let reader = try snapshot.reader(at: 0)
        var total = 0
        while true {
            let piece = try reader.read(upToCount: 100_000)
            if piece.isEmpty { break }
            for (i, byte) in piece.enumerated() where byte != chunk[(total + i) % chunk.count] {
                Issue.record("byte \(total + i) differs")
                return
            }
            total += piece.count
        }
        #expect(total == 40 * chunk.count)
    }

    @Test(arguments: bothStorages) func failingWriteClosureLeavesSlotUnwrittenAndEditorUsable(
        storage: DiskLRUCache.Storage
    ) throws {
        struct Stop: Error {}
        let cache = try openCache(directory.url, storage: storage)
        let editor = try #require(try cache.edit(forKey: "k"))
        #expect(throws: Stop.self) {
            try editor.write(at: 0) { writer in
                try writer.write(Data("x".utf8))
                throw Stop()
            }
        }
        #expect(!JournalFixture.fileExists("k.0.tmp", in: directory.url))
        try editor.setString("b", at: 1)
        expectError(.incompleteEntry) { try editor.commit() }
    }

    @Test(arguments: bothStorages) func editorCalledFromInsideItsWriteClosureThrowsInsteadOfDeadlocking(
        storage: DiskLRUCache.Storage
    ) throws {
        let cache = try openCache(directory.url, storage: storage)
        try cache.set("k", "old0", "old1")
        let editor = try #require(try cache.edit(forKey: "k"))
        try editor.write(at: 0) { writer in
            try writer.write(Data("new0".utf8))
            // The editor's lock is not held here: each call answers at once.
            expectError(.editorBusy) { try editor.setData(Data("x".utf8), at: 1) }
            expectError(.editorBusy) { try editor.commit() }
            #expect(try editor.data(at: 0) == Data("old0".utf8))
        }
        try editor.setString("new1", at: 1)
        try editor.commit()
        #expect(try cache.strings("k") == ["new0", "new1"])
    }

    @Test(arguments: bothStorages) func abortInsideTheWriteClosureAbortsWhenTheClosureReturns(
        storage: DiskLRUCache.Storage
    ) throws {
        let cache = try openCache(directory.url, storage: storage)
        try cache.set("k", "old0", "old1")
        let editor = try #require(try cache.edit(forKey: "k"))
        try editor.write(at: 0) { writer in
            try writer.write(Data("new0".utf8))
            editor.abort()
        }
        expectError(.editorFinished) { try editor.commit() }
        #expect(try cache.strings("k") == ["old0", "old1"])
        #expect(!JournalFixture.fileExists("k.0.tmp", in: directory.url))
        // The key is free again: the abort released it.
        #expect(try cache.edit(forKey: "k") != nil)
    }

    @Test(arguments: bothStorages) func removeDuringAPartialEditLeavesNoEntry(storage: DiskLRUCache.Storage) throws {
        let cache = try openCache(directory.url, storage: storage)
        try cache.set("k1", "A", "B")
        let editor = try #require(try cache.edit(forKey: "k1"))
        try editor.setString("C", at: 0)
        #expect(try cache.removeValue(forKey: "k1"))
        #expect(try cache.snapshot(forKey: "k1") == nil)
        #expect(try cache.edit(forKey: "k1") == nil)  // the editor still holds the key: no second one
        expectError(.incompleteEntry) { try editor.commit() }
        #expect(try cache.snapshot(forKey: "k1") == nil)
        #expect(try JournalFixture.fileNamesBesideSegments(in: directory.url) == ["journal", "journal.lock"])
        try cache.close()
        #expect(try openCache(directory.url, storage: storage).keys() == [])
    }

    @Test(arguments: bothStorages) func removeDuringAFullEditActsAsIfTheRemoveCameFirst(storage: DiskLRUCache.Storage)
        throws
    {
        let cache = try openCache(directory.url, storage: storage)
        try cache.set("k1", "A", "B")
        let editor = try #require(try cache.edit(forKey: "k1"))
        try editor.setString("C", at: 0)
        #expect(try cache.removeValue(forKey: "k1"))
        try editor.setString("D", at: 1)
        try editor.commit()
        #expect(try cache.strings("k1") == ["C", "D"])
        // The READ line stays buffered. A one-shot set of small values in packed storage
        // stages nothing on disk, so it needs no DIRTY line; an editor always writes one.
        let oneShot = storage.inlineLimit == nil ? ["DIRTY k1", "CLEAN k1 1 1"] : ["CLEAN k1 1 1"]
        try expectJournal(directory.url, oneShot + ["DIRTY k1", "REMOVE k1", "CLEAN k1 1 1"], storage: storage)
        try cache.close()
        #expect(try openCache(directory.url, storage: storage).strings("k1") == ["C", "D"])
    }

    @Test(arguments: bothStorages) func snapshotsAndKeysIterateInLRUOrderWithoutTouchingIt(
        storage: DiskLRUCache.Storage
    ) throws {
        let cache = try openCache(directory.url, storage: storage)
        for key in ["a", "b", "c"] { try cache.set(key, key, key + key) }
        try cache.snapshot(forKey: "a")?.close()
        #expect(try cache.keys() == ["b", "c", "a"])
        let sequence = try cache.snapshots()
        try cache.removeValue(forKey: "c")
        let seen = sequence.map { snapshot in snapshot.key + "=" + ((try? snapshot.readString(at: 1)) ?? "?") }
        #expect(seen == ["b=bb", "a=aa"])
        #expect(try cache.keys() == ["b", "a"])
        #expect(try cache.containsValue(forKey: "a"))
        #expect(try !cache.containsValue(forKey: "c"))
    }

    @Test(arguments: bothStorages) func statisticsCountHitsMissesWritesAndRemovals(storage: DiskLRUCache.Storage) throws
    {
        let cache = try openCache(directory.url, storage: storage)
        try cache.set("a", "1", "2")
        try cache.set("b", "1", "2")
        _ = try cache.data(forKey: "a")
        _ = try cache.data(forKey: "zz")
        _ = try cache.data(forKey: "zz")
        try cache.removeValue(forKey: "b")
        let statistics = cache.statistics
        #expect(statistics.hitCount == 1)
        #expect(statistics.missCount == 2)
        #expect(statistics.writeCount == 2)
        #expect(statistics.removeCount == 1)
        #expect(statistics.evictionCount == 0)
    }
}
