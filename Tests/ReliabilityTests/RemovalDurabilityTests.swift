import Foundation
import SwiftyCacheCore
import SwiftyCacheTestSupport
import Testing

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// A removal that returns has happened, in this process and after a reopen: in packed storage a
/// record stays valid until a journal line says otherwise, so a removal the journal cannot take
/// throws rather than come back later.
@Suite(.tags(.addressSanitized)) struct RemovalDurabilityTests {
    let directory = TemporaryDirectory()

    @Test(arguments: bothStorages)
    func aRemovalTheJournalCannotRecordEitherLastsOrThrows(storage: DiskLRUCache.Storage) throws {
        let fileSystem = FaultInjectingFileSystem()
        let cache = try DiskLRUCache(
            directory: directory.url, appVersion: 1, valueCount: 2, maxSize: 1 << 30,
            options: DiskLRUCache.Options(storage: storage), fileSystem: fileSystem)
        for index in 0..<6 { try cache.setData(CheckedValue.pair(key: "k\(index)", sequence: 1), forKey: "k\(index)") }
        // The disk is full: the journal takes no line, and no rebuild fits.
        fileSystem.failCalls(named: ["write"], errno: ENOSPC)
        var removed: [String] = []
        var refused: [String] = []
        for index in 0..<3 {
            let key = "k\(index)"
            do {
                if try cache.removeValue(forKey: key) { removed.append(key) }
            } catch let error as CacheError {
                #expect(error.code == .journalUnavailable)
                #expect(error.key == key)
                refused.append(key)
            }
        }
        if storage == .files {
            // Deleting the files is the removal: a missing file is a miss, now and after a reopen.
            #expect(removed.count == 3)
        } else {
            #expect(refused.count == 3)
            for key in refused { #expect(try cache.data(forKey: key) == CheckedValue.pair(key: key, sequence: 1)) }
        }
        fileSystem.heal()
        cache.simulateCrash()
        let reopened = try DiskLRUCache(
            directory: directory.url, appVersion: 1, valueCount: 2, maxSize: 1 << 30,
            options: DiskLRUCache.Options(storage: storage))
        for key in removed { #expect(try reopened.data(forKey: key) == nil, "\(key) came back") }
        for key in refused { #expect(try reopened.data(forKey: key) == CheckedValue.pair(key: key, sequence: 1)) }
        for index in 3..<6 {
            let key = "k\(index)"
            #expect(try reopened.data(forKey: key) == CheckedValue.pair(key: key, sequence: 1))
        }
        // With room again, the removal goes through and stays.
        for key in refused { #expect(try reopened.removeValue(forKey: key)) }
        reopened.simulateCrash()
        let third = try DiskLRUCache(
            directory: directory.url, appVersion: 1, valueCount: 2, maxSize: 1 << 30,
            options: DiskLRUCache.Options(storage: storage))
        for index in 0..<3 { #expect(try third.data(forKey: "k\(index)") == nil) }
        #expect(third.count == 3)
    }
}
