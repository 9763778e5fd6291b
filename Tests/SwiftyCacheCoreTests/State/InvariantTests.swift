import Foundation
import SwiftyCacheTestSupport
import Testing

@testable import SwiftyCacheCore

/// The state's consistency checks: they hold after every public operation (the walk runs each
/// time the lock is released in builds with `SWIFTYCACHE_INTERNAL_CHECKS`, which the test runs
/// and CI set; other debug builds run only the O(1) checks), they catch a broken state, and
/// the index's fallbacks for a stale index are assertions, not silent dummies.
@Suite struct InvariantTests {
    /// The walk is compiled in exactly when the environment asks for it (`Package.swift`
    /// reads `SWIFTYCACHE_INTERNAL_CHECKS`): CI's runs walk, a dependent's debug build does not.
    @Test func theWalkIsCompiledInExactlyWhenTheEnvironmentAsksForIt() {
        let requested = ProcessInfo.processInfo.environment["SWIFTYCACHE_INTERNAL_CHECKS"] ?? ""
        #expect(CacheState.walksInvariants == !["", "0"].contains(requested))
    }

    /// The walk comes after every hold of a small index, and often enough in a large one that
    /// a break is found within a bounded number of holds, at O(1) amortized cost.
    @Test func theWalkComesAfterEveryHoldOfASmallIndexAndAtABoundedIntervalInALargeOne() throws {
        var state = try makeState()
        for number in 0..<CacheState.walkEveryHoldUpTo - 1 { _ = state.table.insert(key: "k\(number)", valueCount: 2) }
        #expect((0..<10).allSatisfy { _ in state.takeWalkTurn() })
        for number in 0..<5_000 { _ = state.table.insert(key: "l\(number)", valueCount: 2) }
        let interval = state.table.count / CacheState.walkEveryHoldUpTo
        let turns = (0..<(interval * 10)).map { _ in state.takeWalkTurn() }
        #expect(interval > 1)
        #expect(turns.indices.filter { turns[$0] } == (1...10).map { $0 * interval - 1 })
    }

    @Test func theCheapChecksCatchAStateThatTheyCanSeeWithoutAWalk() throws {
        var state = try makeState()
        state.lock = try state.directory.acquireLock()
        #expect(state.cheapInvariantViolation() == nil)
        state.redundantOpCount = -1
        #expect(state.cheapInvariantViolation() == "redundantOpCount is negative: -1")
        #expect(state.invariantViolation() == "redundantOpCount is negative: -1")
        state.lock?.release(using: state.fileSystem)
    }

    let directory = TemporaryDirectory()

    private func makeState() throws -> CacheState {
        let cacheDirectory = CacheDirectory(fileSystem: SystemFileSystem(), path: directory.path)
        try cacheDirectory.create()
        return CacheState(
            directory: cacheDirectory,
            storage: FileStorage(directory: cacheDirectory, valueCount: 2, syncsWrites: false),
            journal: JournalWriter(directory: cacheDirectory, appVersion: 1, valueCount: 2, syncsWrites: false),
            maxSize: 100)
    }

    @Test func aStateBuiltThroughItsMethodsIsConsistent() throws {
        var state = try makeState()
        state.lock = try state.directory.acquireLock()
        _ = try state.recover()
        let editorID = try #require(
            try state.reserveEdit(key: "k", expectedSequenceNumber: nil, requiresEntry: false))
        let staged = try ["ab", "cde"].enumerated().map { slot, text in
            try Data(text.utf8).withUnsafeBytes { try state.storage.stage(key: "k", slot: slot, contents: $0) }
        }
        try state.completeEdit(key: "k", editorID: editorID, staged: staged)
        #expect(state.invariantViolation() == nil)
        #expect(state.size == 5)
        #expect(try state.remove(key: "k"))
        #expect(state.invariantViolation() == nil)
        #expect(state.close() == nil)
        #expect(state.invariantViolation() == nil)
    }

    @Test func aWrongSizeIsCaught() throws {
        var state = try makeState()
        state.lock = try state.directory.acquireLock()
        let index = state.table.insert(key: "k", valueCount: 2)
        state.table.setCommitted(index, lengths: [3, 4])
        state.size = 6
        #expect(state.invariantViolation() == "size is 6 but the committed lengths sum to 7")
        state.size = 7
        #expect(state.invariantViolation() == nil)
        state.lock?.release(using: state.fileSystem)
    }

    @Test func anEntryNeitherCommittedNorEditedIsCaught() throws {
        var state = try makeState()
        state.lock = try state.directory.acquireLock()
        _ = state.table.insert(key: "orphan", valueCount: 2)
        #expect(state.invariantViolation() == "entry orphan is neither committed nor being edited")
        state.lock?.release(using: state.fileSystem)
    }

    @Test func aDirtyLineWithoutAnEditorIsCaught() throws {
        var state = try makeState()
        state.lock = try state.directory.acquireLock()
        let index = state.table.insert(key: "k", valueCount: 2)
        state.table.setCommitted(index, lengths: [0, 0])
        state.table.setDirtyJournaled(index, true)
        #expect(state.invariantViolation() == "entry k has a DIRTY line but no editor")
        state.lock?.release(using: state.fileSystem)
    }

    #if DEBUG
    @Test func readingAStaleIndexStopsADebugBuild() async {
        await #expect(processExitsWith: .failure) {
            var table = EntryTable()
            let index = table.insert(key: "k", valueCount: 1)
            table.remove(at: index)
            _ = table[index]
        }
    }

    @Test func removingAStaleIndexStopsADebugBuild() async {
        await #expect(processExitsWith: .failure) {
            var table = EntryTable()
            let index = table.insert(key: "k", valueCount: 1)
            table.remove(at: index)
            table.remove(at: index)
        }
    }
    #endif
}
