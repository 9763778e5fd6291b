import Foundation
import SwiftyCacheCore
import SwiftyCacheTestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// A packed read records the hit with its plan, in one lock hold; a read that must go the
/// validating way after all (a slot in a file, a damaged record) takes the hit back first.
@Suite struct OneHoldReadTests {
    let directory = TemporaryDirectory()

    @Test func eachReadCountsOnceWhicheverWayItGoes() throws {
        let cache = try openCache(directory.url, storage: .packed(inlineLimit: 4))
        try cache.set("small", "ab", "cd")  // one record
        try cache.set("large", "ab", "longer than four")  // slot 1 in a file: the validating way
        try cache.flush()
        let journal = directory.url.appending(path: "journal")
        let journalBefore = try Data(contentsOf: journal)
        #expect(try cache.strings("small") == ["ab", "cd"])
        #expect(try cache.strings("large") == ["ab", "longer than four"])
        #expect(cache.statistics.hitCount == 2)
        #expect(cache.statistics.missCount == 0)
        #expect(try cache.strings("absent") == nil)
        #expect(cache.statistics.missCount == 1)
        try cache.flush()
        // Packed storage writes nothing for a read, whichever way it goes.
        #expect(try Data(contentsOf: journal) == journalBefore)
    }

    @Test func aDamagedRecordIsOneMissAndOneCorruptRecord() throws {
        let cache = try openCache(directory.url, storage: .packed)
        try cache.set("k1", "abc", "de")
        let segment = directory.url.appending(path: "segment-00000001.pack")
        let handle = try FileHandle(forUpdating: segment)
        let end = try handle.seekToEnd()
        try handle.seek(toOffset: end - 1)
        try handle.write(contentsOf: Data([0]))  // "e" becomes NUL
        try handle.close()
        #expect(try cache.data(forKey: "k1") == nil)
        #expect(cache.statistics.hitCount == 0)
        #expect(cache.statistics.missCount == 1)
        #expect(cache.statistics.corruptRecordCount == 1)
        #expect(try !cache.containsValue(forKey: "k1"))
    }
}
