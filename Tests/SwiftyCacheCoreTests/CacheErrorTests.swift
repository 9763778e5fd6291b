import Foundation
import SwiftyCacheTestSupport
import Testing

@testable import SwiftyCacheCore

/// What an error says: its operation is a named constant, the public call that failed, and it
/// knows where the library built it.
@Suite struct CacheErrorTests {
    let directory = TemporaryDirectory()

    @Test func anErrorNamesItsOperationAndWhereTheLibraryBuiltIt() throws {
        let cache = try DiskLRUCache(directory: directory.url, appVersion: 1, valueCount: 1, maxSize: 1 << 20)
        defer { try? cache.close() }
        let error = try #require(throws: CacheError.self) { try cache.setData([Data()], forKey: "Not A Key") }
        #expect(error.code == .invalidKey)
        #expect(error.operation == .setData)
        let location = try #require(error.location)
        #expect(location.file.hasPrefix("SwiftyCacheCore/"))
        #expect(location.line > 0)
        #expect(error.debugDescription.hasSuffix("[at \(location)]"))
        #expect(!error.description.contains(location.file))
    }

    @Test func eachFactoryRecordsItsCallerNotItself() {
        let first = CacheError.closed(operation: .flush)
        let second = CacheError.closed(operation: .flush)
        #expect(first.location?.file == "SwiftyCacheCoreTests/CacheErrorTests.swift")
        #expect(first.location?.line != second.location?.line)
    }

    @Test func anOperationReadsAsItsNameAndComparesWithTheNamesOfEarlierReleases() {
        let error = CacheError.editInProgress(key: "k", operation: .setPartialData)
        #expect(error.operation == .setPartialData)
        #expect("\(error.operation.map(\.name) ?? "")" == "setPartialData")
        #expect(error.description.contains("(operation: setPartialData, key: k)"))
        #expect(CacheError.Operation.setMaxSize.description == "setMaxSize")
    }

    @Test func anErrorBuiltByClientCodeHasNoLocation() {
        let error = CacheError(code: .ioFailure, message: "m", operation: .read)
        #expect(error.location == nil)
        #expect(error.debugDescription == error.description)
    }

    /// An error raised by a step inside a call (creating or locking the directory, rebuilding
    /// the journal, evicting) names the call.
    @Test(arguments: bothStorages) func anErrorNamesThePublicCallNotTheStepThatFailed(storage: DiskLRUCache.Storage)
        throws
    {
        let fileSystem = FaultInjectingFileSystem()
        fileSystem.failCalls(named: ["mkdir"], errno: EACCES)
        let opening = try #require(throws: CacheError.self) {
            try DiskLRUCache(
                directory: directory.appending("nested/deeper"), appVersion: 1, valueCount: 1, maxSize: 100,
                options: .init(storage: storage), fileSystem: fileSystem)
        }
        #expect(opening.operation == .open && opening.code == .ioFailure)
        fileSystem.heal()

        let cache = try DiskLRUCache(
            directory: directory.url, appVersion: 1, valueCount: 1, maxSize: 100, options: .init(storage: storage),
            fileSystem: fileSystem)
        defer { try? cache.close() }
        for index in 0..<4 { try cache.setData([Data(repeating: 1, count: 20)], forKey: "k\(index)") }
        // The rebuilt journal cannot be swapped in: compact() reports itself, not the rebuild.
        fileSystem.failCalls(named: ["rename"], errno: EIO, pathContaining: "journal")
        let compacting = try #require(throws: CacheError.self) { try cache.compact() }
        #expect(compacting.operation == .compact)
        #expect(compacting.path?.contains("journal") == true)
        fileSystem.heal()
        try cache.compact()

        // The directory vanished and cannot be recreated: setData reports itself.
        try FileManager.default.removeItem(at: directory.url)
        fileSystem.failCalls(named: ["mkdir"], errno: EACCES)
        let restoring = try #require(throws: CacheError.self) { try cache.setData([Data("x".utf8)], forKey: "x") }
        #expect(restoring.operation == .setData)
        fileSystem.heal()
        try cache.setData([Data("x".utf8)], forKey: "x")
        #expect(try cache.data(forKey: "x") == [Data("x".utf8)])
    }

    /// A directory deleted underneath is one outcome, which the state repairs: the write that
    /// met it succeeds, in both storages, by a one-shot write and by an editor.
    @Test(arguments: bothStorages) func aVanishedDirectoryIsRecreatedByTheWriteThatFindsIt(
        storage: DiskLRUCache.Storage
    ) throws {
        let cache = try DiskLRUCache(
            directory: directory.url, appVersion: 1, valueCount: 1, maxSize: 1 << 20, options: .init(storage: storage))
        defer { try? cache.close() }
        try cache.setData([Data("a".utf8)], forKey: "a")
        try FileManager.default.removeItem(at: directory.url)
        try cache.setData([Data(repeating: 7, count: 100_000)], forKey: "big")
        try FileManager.default.removeItem(at: directory.url)
        let editor = try #require(try cache.edit(forKey: "b"))
        try editor.setData(Data("b".utf8), at: 0)
        try editor.commit()
        #expect(try cache.keys() == ["b"])
        #expect(try cache.data(forKey: "b") == [Data("b".utf8)])
    }

    /// A file that is missing while the directory stands is not a vanished directory: nothing
    /// is recreated, and the error says what failed.
    @Test func aMissingFileInAStandingDirectoryIsAnIOFailure() throws {
        let fileSystem = FaultInjectingFileSystem()
        let cache = try DiskLRUCache(
            directory: directory.url, appVersion: 1, valueCount: 1, maxSize: 1 << 20, fileSystem: fileSystem)
        defer { try? cache.close() }
        try cache.setData([Data("a".utf8)], forKey: "a")
        fileSystem.failCalls(named: ["open"], errno: ENOENT, pathContaining: ".tmp")
        let error = try #require(throws: CacheError.self) { try cache.setData([Data("b".utf8)], forKey: "b") }
        #expect(error.code == .ioFailure && error.operation == .setData)
        #expect((error.cause as? CacheError.SystemCallError)?.errno == ENOENT)
        fileSystem.heal()
        #expect(try cache.data(forKey: "a") == [Data("a".utf8)])
    }
}
