import Foundation
import SwiftyCacheCore
import SwiftyCacheTestSupport
import Testing

/// A packed cache of hundreds of segments opens, reads, writes, compacts and reopens after a
/// crash in a process whose descriptor limit is 64, four times lower than iOS gives an app;
/// the same process keeping every segment open fails.
@Suite struct FewDescriptorsTests {
    let directory = TemporaryDirectory()

    @Test func aCacheOfManySegmentsRunsUnderALowDescriptorLimit() throws {
        let cacheURL = directory.url.appending(path: "cache")
        var options = DiskLRUCache.Options(storage: .packed)
        options.packedSegmentSize = 256
        let cache = try DiskLRUCache(
            directory: cacheURL, appVersion: 1, valueCount: 2, maxSize: Int.max, options: options)
        for i in 0..<600 { try cache.setData([Data("key-\(i)".utf8), Data(count: 100)], forKey: "key-\(i)") }
        try cache.close()
        let segments = try FileManager.default.contentsOfDirectory(atPath: cacheURL.path(percentEncoded: false))
            .filter { $0.hasPrefix("segment-") }
        #expect(segments.count >= 300)
        let copy = directory.url.appending(path: "copy")
        try FileManager.default.copyItem(at: cacheURL, to: copy)

        let bounded = try runCommand([
            reliabilityWorker.path, "few-descriptors", cacheURL.path(percentEncoded: false), "64", "default",
        ])
        #expect(bounded.status == 0, "\(bounded.output)")
        // Two sessions read every key: 600, then 600 - 50 removed + 50 written.
        #expect(bounded.output.contains("ok 1200"), "\(bounded.output)")

        // Every segment kept open: the same work runs out of descriptors.
        let unbounded = try runCommand([
            reliabilityWorker.path, "few-descriptors", copy.path(percentEncoded: false), "64", "100000",
        ])
        #expect(unbounded.status != 0, "\(unbounded.output)")
        #expect(unbounded.output.contains("open files") || unbounded.output.contains("EMFILE"), "\(unbounded.output)")
    }
}
