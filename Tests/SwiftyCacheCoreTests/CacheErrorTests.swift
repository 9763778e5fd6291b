import Foundation
import SwiftyCacheTestSupport
import Testing

@testable import SwiftyCacheCore

/// What an error says: its operation is a named constant, and it knows where the library built it.
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
        #expect(CacheError.Operation.rebuildJournal.description == "rebuild journal")
    }

    @Test func anErrorBuiltByClientCodeHasNoLocation() {
        let error = CacheError(code: .ioFailure, message: "m", operation: .read)
        #expect(error.location == nil)
        #expect(error.debugDescription == error.description)
    }
}
