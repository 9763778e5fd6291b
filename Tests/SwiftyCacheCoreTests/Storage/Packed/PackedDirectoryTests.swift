import Foundation
import SwiftyCacheCore
import SwiftyCacheTestSupport
import Testing

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// What the packed storage suites share: their temporary directory, opened as a packed cache,
/// and its segments read back.
protocol PackedDirectoryTests {
    var directory: TemporaryDirectory { get }
}

extension PackedDirectoryTests {
    func openPacked(
        maxSize: Int = Int.max, inlineLimit: Int = DiskLRUCache.Storage.defaultInlineLimit,
        segmentSize: Int64 = 4 << 20,
        migrates: Bool = false, readOnly: Bool = false, syncsWrites: Bool = false, compactsInBackground: Bool = true
    ) throws -> DiskLRUCache {
        var options = DiskLRUCache.Options(
            syncsWrites: syncsWrites, isReadOnly: readOnly, storage: .packed(inlineLimit: inlineLimit))
        options.packedSegmentSize = segmentSize
        options.migratesFileStorage = migrates
        options.compactsInBackground = compactsInBackground
        return try DiskLRUCache(
            directory: directory.url, appVersion: testAppVersion, valueCount: 2, maxSize: maxSize, options: options)
    }

    func segmentBytes(_ number: Int = 1) throws -> [UInt8] {
        let name = String(format: "segment-%08d.pack", number)
        return Array(try Data(contentsOf: directory.appending(name)))
    }

    func segmentNames() throws -> [String] {
        try JournalFixture.fileNames(in: directory.url).filter { $0.hasPrefix("segment-") }
    }

    /// Bytes of all segment files.
    func segmentFileBytes() throws -> Int {
        try segmentNames().reduce(0) { $0 + (try segmentBytes(Int($1.dropFirst(8).prefix(8)) ?? 0).count) }
    }
}
