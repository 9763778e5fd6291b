import Foundation
import SwiftyCacheCore
import SwiftyCacheTestSupport
import Testing

/// A disk that packed storage filled by itself is no dead end: removals free space without
/// first needing any (the journal's `REMOVE` lines may use the space reserve), compaction
/// reclaims it, writes resume, and a full directory reopens, all with no outside help.
@Suite(.serialized) struct PackedFullDiskTests {
    static func options() -> DiskLRUCache.Options {
        var options = DiskLRUCache.Options(storage: .packed)
        options.packedSegmentSize = 256 << 10
        return options
    }

    static func values(_ key: String, _ sequence: Int) -> [Data] {
        (0..<2).map { CheckedValue.make(key: key, slot: $0, sequence: sequence, fillerLength: 1_400) }
    }

    @Test func aFullTmpfsTheCacheFilledIsLeftByRemovingHalf() throws {
        let mountPoint = TemporaryDirectory()
        let mounted = try runCommand(["mount", "-t", "tmpfs", "-o", "size=8m", "tmpfs", mountPoint.path])
        guard mounted.status == 0 else {
            print("skipped aFullTmpfsTheCacheFilledIsLeftByRemovingHalf: cannot mount a tmpfs here (\(mounted.output))")
            return
        }
        defer { _ = try? runCommand(["umount", mountPoint.path]) }
        let url = mountPoint.appending("cache")
        var stored: [String] = []
        do {
            let cache = try DiskLRUCache(
                directory: url, appVersion: 1, valueCount: 2, maxSize: 1 << 30, options: Self.options())
            // Fill the file system with the cache alone, until a write fails.
            for index in 0..<100_000 {
                do {
                    try cache.setData(Self.values("k\(index)", 1), forKey: "k\(index)")
                    stored.append("k\(index)")
                } catch {
                    break
                }
            }
            #expect(stored.count > 1_000, "\(stored.count) writes fit")
            // Killed on the full disk.
            cache.simulateCrash()
        }
        // A full directory reopens.
        let cache = try DiskLRUCache(
            directory: url, appVersion: 1, valueCount: 2, maxSize: 1 << 30, options: Self.options())
        #expect(!cache.recoveryReport.wasWiped)
        #expect(try cache.data(forKey: stored[0]) == Self.values(stored[0], 1))
        // Every other entry removed: each removal returns, with no space to start from.
        var failed: [String] = []
        for key in stored.enumerated().filter({ $0.offset % 2 == 1 }).map(\.element) {
            do {
                #expect(try cache.removeValue(forKey: key))
            } catch {
                failed.append("\(key): \(error)")
            }
        }
        #expect(failed.isEmpty, "\(failed.prefix(3))")
        // Compaction reclaims the space by itself (in the background, waited for here).
        cache.waitForBackgroundWork()
        try cache.compact()
        // Writes resume: a quarter of what was there before.
        var rewritten = 0
        for index in 0..<(stored.count / 4) {
            let key = "new\(index)"
            do {
                try cache.setData(Self.values(key, 2), forKey: key)
                rewritten += 1
            } catch {
                Issue.record("write \(index) after the removals failed: \(error)")
                break
            }
        }
        #expect(rewritten == stored.count / 4)
        try cache.close()
        let reopened = try DiskLRUCache(
            directory: url, appVersion: 1, valueCount: 2, maxSize: 1 << 30, options: Self.options())
        for (offset, key) in stored.enumerated() {
            let expected = offset % 2 == 1 ? nil : Self.values(key, 1)
            #expect(try reopened.data(forKey: key) == expected, "\(key)")
        }
        for index in 0..<rewritten {
            #expect(try reopened.data(forKey: "new\(index)") == Self.values("new\(index)", 2))
        }
        print(
            "full disk, packed: \(stored.count) entries filled 8 MiB; \(stored.count / 2) removed with no free space; "
                + "\(rewritten) written after")
        try reopened.close()
    }
}
