import Foundation
import SwiftyCacheCore
import SwiftyCacheTestSupport
import Testing

/// `journal.reserve`, the space a packed cache sets aside for a full disk: it follows the live
/// bytes (an eighth of them) up to one segment, as the cache grows, whether or not anything
/// else calls for a cleanup pass.
@Suite struct SpaceReserveTests {
    let directory = TemporaryDirectory()

    var reserveSize: Int {
        let path = directory.url.appending(path: "journal.reserve").path(percentEncoded: false)
        return ((try? FileManager.default.attributesOfItem(atPath: path))?[.size] as? Int) ?? 0
    }

    @Test func theReserveGrowsWithTheLiveBytesUpToOneSegment() throws {
        var options = DiskLRUCache.Options(storage: .packed)
        options.packedSegmentSize = 256 << 10
        let cache = try DiskLRUCache(
            directory: directory.url, appVersion: testAppVersion, valueCount: 1, maxSize: Int.max, options: options)
        #expect(reserveSize == 64 << 10)
        let value = [Data(repeating: 7, count: 1_000)]
        // New keys only: no garbage, no journal rewrite; the live bytes double twice and more.
        for i in 0..<4_000 { try cache.setData(value, forKey: "k\(i)") }
        cache.waitForBackgroundWork()
        // An eighth of 4 MB is more than a segment: the ceiling, reached from just over half
        // of it (sized at about 1 MB of live bytes).
        #expect(reserveSize == 256 << 10)
        try cache.close()
    }
}
