public import Foundation
public import SwiftyCacheCore

/// The checks every reliability suite runs after reopening a cache directory.
public enum CacheInvariants {
    public struct Violation: Error, CustomStringConvertible {
        public var description: String
    }

    /// Reopens `directory` and checks that the journal parsed (no wipe), no `.tmp` or
    /// unreferenced value file is left, `size` equals the value files' bytes, and every value
    /// reads back whole, and, with `checksValues`, is a `CheckedValue` of its own key and slot.
    /// With `allowsReportedStrays`, a value file no journal line names may stay if the open
    /// reported it (`recoveryReport.unknownFiles`): what a power cut without `syncsWrites` can
    /// leave, the journal lines that named it lost while the file reached the disk; the cache
    /// cannot prove it is its own, so it leaves it (docs/RELIABILITY.md, "Only the cache's own
    /// files are deleted").
    ///
    /// - Returns: Each key's parsed slots.
    @discardableResult
    public static func check(
        _ directory: URL, appVersion: Int = 1, valueCount: Int = 2, maxSize: Int = Int.max, allowWipe: Bool = false,
        checksValues: Bool = true, storage: DiskLRUCache.Storage = .files, allowsReportedStrays: Bool = false
    ) throws -> [String: [CheckedValue.Parsed]] {
        let cache = try DiskLRUCache(
            directory: directory, appVersion: appVersion, valueCount: valueCount, maxSize: maxSize,
            options: .init(storage: storage))
        defer { try? cache.close() }
        if !allowWipe, let reason = cache.recoveryReport.wipeReason {
            throw Violation(description: "the journal did not parse and the cache was wiped: \(reason)")
        }
        let keys = try cache.keys()
        var state: [String: [CheckedValue.Parsed]] = [:]
        var bytesRead = 0
        for key in keys {
            guard let values = try cache.data(forKey: key) else {
                throw Violation(description: "entry \(key) is listed but its files are missing")
            }
            bytesRead += values.reduce(0) { $0 + $1.count }
            var parsed: [CheckedValue.Parsed] = []
            for (slot, value) in values.enumerated() where checksValues {
                guard let fields = CheckedValue.parse(value) else {
                    throw Violation(description: "entry \(key) slot \(slot) is torn or corrupt: \(value.count) bytes")
                }
                guard fields.key == key, fields.slot == slot else {
                    throw Violation(
                        description: "entry \(key) slot \(slot) holds the value of \(fields.key) slot \(fields.slot)")
                }
                parsed.append(fields)
            }
            state[key] = parsed
        }
        // Opening and reading may have started a background journal rebuild, whose
        // `journal.tmp` exists until it is swapped in: list the files once it is done.
        cache.waitForBackgroundWork()
        let names = try FileManager.default.contentsOfDirectory(atPath: directory.path(percentEncoded: false))
        if let stray = names.first(where: { $0.hasSuffix(".tmp") }) {
            throw Violation(description: "a temporary file was left after open: \(stray)")
        }
        let keySet = Set(keys)
        for name in names where name.contains(".") && !name.hasPrefix("journal") {
            let parts = name.split(separator: ".")
            if parts.count == 2, Int(parts[1]) != nil, !keySet.contains(String(parts[0])) {
                if allowsReportedStrays && cache.recoveryReport.unknownFiles.contains(name) { continue }
                throw Violation(description: "an unreferenced value file was left after open: \(name)")
            }
        }
        if cache.statistics.corruptRecordCount > 0 {
            throw Violation(description: "\(cache.statistics.corruptRecordCount) packed records failed their checksum")
        }
        // File storage: the value files' sizes; packed storage: what was read back.
        let bytes = storage.inlineLimit == nil ? try JournalFixture.valueBytes(in: directory) : bytesRead
        guard cache.size == bytes else {
            throw Violation(description: "size is \(cache.size) but the value files hold \(bytes) bytes")
        }
        return state
    }
}
