import SwiftyCacheCore

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The keys a clean close found most recently used in memory, kept in the cache directory
/// (`objectcache-warm`) for the next open to load in the background (a warm start).
///
/// The record is a hint: a missing, damaged or foreign record loads nothing, and a key whose
/// entry is gone since is a miss of the load, never an error. Its form: the line
/// `swiftycache.warm 1`, then the key count and each key's canonical bytes (``KeyCoding``),
/// lengths as 32-bit little-endian integers, then the xxHash64 of everything before it.
enum WarmStartRecord {
    static let record = DirectoryRecord(
        fileName: "objectcache-warm", description: "the warm start record", byteLimit: byteLimit)
    static let magic = Array("swiftycache.warm 1\n".utf8)
    /// The largest record read: a bound on the memory a hostile file can take.
    static let byteLimit = 16 << 20
    /// The longest key recorded; longer ones are left out.
    static let keyLimit = 64 << 10

    /// The recorded keys' bytes, most recently used first, at most `limit` of them; none
    /// when there is no usable record.
    ///
    /// - Complexity: O(record size).
    static func read(in directory: URL, limit: Int, fileSystem: any FileSystem) -> [Data] {
        guard let bytes = try? record.bytes(in: directory, fileSystem: fileSystem) ?? nil,
            bytes.count >= magic.count + 12, bytes.starts(with: magic)
        else { return [] }
        let body = bytes.count - 8
        guard XXHash64.hash(Array(bytes[..<body])) == integer(in: bytes, at: body, as: UInt64.self) else { return [] }
        var offset = magic.count
        let count = Int(integer(in: bytes, at: offset, as: UInt32.self))
        offset += 4
        var keys: [Data] = []
        keys.reserveCapacity(min(count, limit, 4096))
        while keys.count < min(count, limit), offset <= body - 4 {
            let length = Int(integer(in: bytes, at: offset, as: UInt32.self))
            offset += 4
            guard length <= body - offset else { return keys }
            keys.append(Data(bytes[offset..<offset + length]))
            offset += length
        }
        return keys
    }

    /// Records `keys` (canonical key bytes, most recently used first), replacing any earlier
    /// record. Failures are left unreported: the record is a hint.
    static func write(_ keys: [Data], in directory: URL, fileSystem: any FileSystem) {
        var bytes = magic
        let kept = keys.filter { $0.count <= keyLimit }
        append(UInt32(truncatingIfNeeded: kept.count), to: &bytes)
        for key in kept {
            append(UInt32(truncatingIfNeeded: key.count), to: &bytes)
            bytes += key
        }
        append(XXHash64.hash(bytes), to: &bytes)
        try? record.write(bytes, in: directory, fileSystem: fileSystem)
    }

    /// Deletes the record.
    static func remove(in directory: URL, fileSystem: any FileSystem) {
        record.remove(in: directory, fileSystem: fileSystem)
    }

    private static func integer<T: FixedWidthInteger>(in bytes: [UInt8], at offset: Int, as type: T.Type) -> T {
        var value: T = 0
        for index in 0..<MemoryLayout<T>.size { value |= T(bytes[offset + index]) << (8 * index) }
        return value
    }

    private static func append<T: FixedWidthInteger>(_ value: T, to bytes: inout [UInt8]) {
        for index in 0..<MemoryLayout<T>.size { bytes.append(UInt8(truncatingIfNeeded: value >> (8 * index))) }
    }
}
