import Dispatch
import Foundation
import SwiftyCacheCore
import SwiftyCacheTestSupport
import Testing

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A power cut in the middle of commits, simulated on a real ext4 file system with the
/// `EXT4_IOC_SHUTDOWN` ioctl (`EXT4_GOING_FLAGS_NOLOGFLUSH`: nothing more reaches the disk).
@Suite(.serialized) struct PowerLossTests {
    static let shutdownRequest: UInt = 0x8004_587D  // _IOR('X', 125, __u32)
    static let noLogFlush: UInt32 = 2

    /// Formats and mounts a small ext4 image; `nil`, with a printed reason, where this machine
    /// cannot (not root, no loop devices, no mkfs.ext4).
    static func mountImage(in root: TemporaryDirectory, name: String) throws -> (image: String, mountPoint: String)? {
        let image = root.appending("\(name).ext4").path(percentEncoded: false)
        let mountPoint = root.appending(name).path(percentEncoded: false)
        try FileManager.default.createDirectory(atPath: mountPoint, withIntermediateDirectories: true)
        guard try runCommand(["truncate", "-s", "64M", image]).status == 0,
            try runCommand(["mkfs.ext4", "-q", "-F", image]).status == 0
        else {
            print("skipped \(name): mkfs.ext4 is not available here")
            return nil
        }
        let mounted = try runCommand(["mount", "-o", "loop", image, mountPoint])
        guard mounted.status == 0 else {
            print("skipped \(name): cannot mount a loop device here (\(mounted.output))")
            return nil
        }
        return (image, mountPoint)
    }

    /// Commits `count` entries, cuts the power after them, remounts, and returns the reopened
    /// cache's entries by key, and the keys whose commit returned.
    static func commitThenCutPower(
        syncsWrites: Bool, storage: DiskLRUCache.Storage, name: String
    ) throws -> (returned: [String], found: [String: [CheckedValue.Parsed]])? {
        let root = TemporaryDirectory(name)
        guard let (image, mountPoint) = try mountImage(in: root, name: name) else { return nil }
        let cacheURL = URL(filePath: mountPoint).appending(path: "cache", directoryHint: .isDirectory)
        var returned: [String] = []
        do {
            let cache = try DiskLRUCache(
                directory: cacheURL, appVersion: 1, valueCount: 2, maxSize: 1 << 30,
                options: DiskLRUCache.Options(syncsWrites: syncsWrites, storage: storage))
            for sequence in 1...40 {
                let key = "k\(sequence)"
                try cache.setData(
                    (0..<2).map { CheckedValue.make(key: key, slot: $0, sequence: sequence, fillerLength: 3000) },
                    forKey: key)
                returned.append(key)
            }
            let fd = open(mountPoint, O_RDONLY)
            var flags = noLogFlush
            #expect(ioctl(fd, shutdownRequest, &flags) == 0)
            close(fd)
            // The file system is gone: what follows fails, and must not crash.
            _ = try? cache.setData([Data("late".utf8), Data("write".utf8)], forKey: "late")
            try? cache.close()
        }
        try runCommand(["umount", mountPoint])
        guard try runCommand(["mount", "-o", "loop", image, mountPoint]).status == 0 else {
            Issue.record("the image did not mount again")
            return nil
        }
        defer { _ = try? runCommand(["umount", mountPoint]) }
        // Without `syncsWrites` a value file can reach the disk while the lines naming it do not:
        // it stays, reported, never deleted as if it were provably the cache's.
        let found = try CacheInvariants.check(
            cacheURL, appVersion: 1, valueCount: 2, allowWipe: true, storage: storage,
            allowsReportedStrays: !syncsWrites)
        return (returned, found)
    }

    @Test(.tags(.slow), .fullRunOnly, arguments: bothStorages)
    func withSyncedWritesEveryCommitThatReturnedSurvivesAPowerCut(storage: DiskLRUCache.Storage) throws {
        guard let (returned, found) = try Self.commitThenCutPower(syncsWrites: true, storage: storage, name: "durable")
        else { return }
        let missing = returned.filter { found[$0] == nil }
        print(
            "power cut with syncsWrites, \(storage): \(returned.count) commits returned, \(missing.count) missing after remount"
        )
        #expect(missing.isEmpty, "lost: \(missing)")
    }

    @Test(.tags(.slow), .fullRunOnly, arguments: bothStorages)
    func withoutSyncedWritesAPowerCutLeavesNothingTornOrMisattributed(storage: DiskLRUCache.Storage) throws {
        // CacheInvariants.check verifies every surviving value is whole and its own key's.
        guard
            let (returned, found) = try Self.commitThenCutPower(syncsWrites: false, storage: storage, name: "buffered")
        else { return }
        print(
            "power cut without syncsWrites, \(storage): \(returned.count) commits returned, \(found.count) present after remount"
        )
        #expect(Set(found.keys).isSubset(of: Set(returned)))
    }
}
