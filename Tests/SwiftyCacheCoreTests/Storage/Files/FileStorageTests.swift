import Foundation
import SwiftyCacheTestSupport
import Testing

@testable import SwiftyCacheCore

/// File storage on its own, below the state: the Java layout's names, staging into `key.i.tmp`,
/// publishing by rename, reading what was committed whatever happens to the names after, and
/// deleting only the cache's own files.
@Suite struct FileStorageTests {
    let directory = TemporaryDirectory()

    func makeStorage(valueCount: Int = 2) throws -> FileStorage {
        try FileManager.default.createDirectory(at: directory.url, withIntermediateDirectories: true)
        let cacheDirectory = CacheDirectory(
            fileSystem: SystemFileSystem(), path: directory.url.path(percentEncoded: false))
        return FileStorage(directory: cacheDirectory, valueCount: valueCount, syncsWrites: false)
    }

    func names() throws -> Set<String> {
        Set(try FileManager.default.contentsOfDirectory(atPath: directory.url.path(percentEncoded: false)))
    }

    func stage(_ storage: FileStorage, _ key: String, _ values: [String]) throws -> [StagedSlot?] {
        try values.enumerated().map { slot, value in
            try Data(value.utf8).withUnsafeBytes { try storage.stage(key: key, slot: slot, contents: $0) }
        }
    }

    @Test func theNamesAreTheJavaLibrarys() throws {
        let storage = try makeStorage()
        #expect(storage.cleanPath("k", 1).hasSuffix("/k.1"))
        #expect(storage.dirtyPath("k", 0).hasSuffix("/k.0.tmp"))
    }

    @Test func stagingWritesTemporaryFilesAndPublishingRenamesThem() throws {
        let storage = try makeStorage()
        let staged = try stage(storage, "k", ["a", "bc"])
        #expect(try names() == ["k.0.tmp", "k.1.tmp"])
        let location = try storage.publish(key: "k", staged: staged, committed: nil)
        #expect(location == .none)
        #expect(try names() == ["k.0", "k.1"])
        let opened = try #require(try storage.open(key: "k", location: location, lengths: [1, 2]))
        defer { storage.close(opened) }
        #expect(try storage.readAll(opened, lengths: [1, 2], key: "k") == [Data("a".utf8), Data("bc".utf8)])
    }

    @Test func anOpenedValueReadsWhatWasCommittedAfterAReplacementAndADeletion() throws {
        let storage = try makeStorage()
        _ = try storage.publish(key: "k", staged: try stage(storage, "k", ["old", "old!"]), committed: nil)
        let opened = try #require(try storage.open(key: "k", location: .none, lengths: [3, 4]))
        defer { storage.close(opened) }
        _ = try storage.publish(key: "k", staged: try stage(storage, "k", ["new", "new!"]), committed: nil)
        #expect(try storage.readAll(opened, lengths: [3, 4], key: "k") == [Data("old".utf8), Data("old!".utf8)])
        #expect(storage.delete(key: "k", location: .none, lengths: [3, 4]))
        #expect(try names().isEmpty)
        #expect(try storage.readWhole(opened, slot: 1, length: 4, key: "k") == Data("old!".utf8))
    }

    @Test func aValueOfAnotherLengthOrKindIsAMissNotAMisread() throws {
        let storage = try makeStorage()
        _ = try storage.publish(key: "k", staged: try stage(storage, "k", ["abc", "de"]), committed: nil)
        #expect(try storage.open(key: "k", location: .none, lengths: [3, 5]) == nil)  // the journal says 5
        try FileManager.default.removeItem(atPath: storage.cleanPath("k", 1))
        try FileManager.default.createDirectory(
            atPath: storage.cleanPath("k", 1), withIntermediateDirectories: false)
        #expect(try storage.open(key: "k", location: .none, lengths: [3, 2]) == nil)  // a folder
    }

    @Test func discardingAnEditDeletesOnlyItsTemporaryFiles() throws {
        let storage = try makeStorage()
        _ = try storage.publish(key: "k", staged: try stage(storage, "k", ["a", "b"]), committed: nil)
        let staged = try stage(storage, "k", ["c", "d"])
        #expect(storage.discard(key: "k", staged: staged))
        #expect(try names() == ["k.0", "k.1"])
    }

    @Test func deletingEverythingOfAKeySparesOtherFiles() throws {
        let storage = try makeStorage()
        _ = try storage.publish(key: "k", staged: try stage(storage, "k", ["a", "b"]), committed: nil)
        _ = try stage(storage, "k", ["c", "d"])
        _ = try storage.publish(key: "other", staged: try stage(storage, "other", ["x", "y"]), committed: nil)
        try Data("mine".utf8).write(to: directory.url.appending(path: "notes.txt"))
        #expect(storage.deleteEverything(of: "k"))
        #expect(try names() == ["other.0", "other.1", "notes.txt"])
    }

    @Test func theBytesOfAClosedDirectoryCountOnlyCommittedValueFiles() throws {
        let storage = try makeStorage()
        _ = try storage.publish(key: "k", staged: try stage(storage, "k", ["abc", "de"]), committed: nil)
        _ = try stage(storage, "j", ["staged", "only"])
        try Data(count: 1000).write(to: directory.url.appending(path: "notes.txt"))
        #expect(FileStorage.valueBytes(in: storage.directory) == 5)
    }
}
