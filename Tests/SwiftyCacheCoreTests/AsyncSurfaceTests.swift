import Foundation
import SwiftyCacheCore
import SwiftyCacheTestSupport
import Testing

/// Every blocking call of the engine has an `async` overload that does what the synchronous one
/// does; the renamed calls and `CacheError.SystemCallError` as the cause of an I/O failure.
@Suite struct AsyncSurfaceTests {
    let directory = TemporaryDirectory()

    @Test(arguments: bothStorages)
    func theAsyncOverloadsDoWhatTheSynchronousOnesDo(storage: DiskLRUCache.Storage) async throws {
        let cache = try openCache(directory.url, storage: storage)
        try await cache.setData([Data("a".utf8), Data("b".utf8)], forKey: "k")
        #expect(try await cache.containsValue(forKey: "k"))
        #expect(try await cache.keys() == ["k"])
        let editor = try #require(try await cache.edit(forKey: "k"))
        try editor.setString("c", at: 1)
        try editor.commit()
        #expect(try await cache.data(forKey: "k") == [Data("a".utf8), Data("c".utf8)])
        try await cache.setMaxSize(1 << 20)
        #expect(cache.maxSize == 1 << 20)
        try await cache.compact()
        #expect(try await cache.removeValue(forKey: "k"))
        #expect(try await !cache.containsValue(forKey: "k"))
        try await cache.setData([Data("x".utf8), Data("y".utf8)], forKey: "j")
        try await cache.evictAll()
        #expect(try await cache.keys().isEmpty)
        try await cache.refresh()  // a writer's refresh does nothing
        try await cache.delete()
        #expect(!FileManager.default.fileExists(atPath: directory.url.path(percentEncoded: false)))
    }

    @Test func aSnapshotReadsStringsAndThrowsTheReason() throws {
        let cache = try openCache(directory.url)
        try cache.setData([Data("text".utf8), Data([0xff, 0xfe])], forKey: "k")
        let snapshot = try #require(try cache.snapshot(forKey: "k"))
        #expect(try snapshot.readString(at: 0) == "text")
        #expect(try snapshot.readString(at: 1) == nil)  // not UTF-8
        #expect(throws: CacheError.self) { try snapshot.readString(at: 2) }
        snapshot.close()
        #expect { try snapshot.readString(at: 0) } throws: { ($0 as? CacheError)?.code == .snapshotClosed }
        try cache.close()
    }

    @Test func anIOFailureCarriesTheSystemCallAsItsCause() throws {
        let fileSystem = FaultInjectingFileSystem()
        let cache = try DiskLRUCache(
            directory: directory.url, appVersion: 1, valueCount: 1, maxSize: 1 << 20,
            fileSystem: fileSystem)
        fileSystem.failCalls(named: ["write"], errno: EIO)
        let failure = #expect(throws: CacheError.self) { try cache.setData([Data("v".utf8)], forKey: "k") }
        let cause = try #require(failure.flatMap { Self.systemCall(in: $0) })
        #expect(cause.errno == EIO)
        #expect(!cause.call.isEmpty)
        #expect(cause.description.contains("errno \(EIO)"))
        fileSystem.heal()
        try cache.close()
    }

    /// The system call at the bottom of a chain of causes.
    static func systemCall(in error: any Error) -> CacheError.SystemCallError? {
        if let call = error as? CacheError.SystemCallError { return call }
        if let error = error as? CacheError, let cause = error.cause { return systemCall(in: cause) }
        return nil
    }
}
