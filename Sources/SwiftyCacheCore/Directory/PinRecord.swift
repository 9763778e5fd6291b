/// The pinned keys, kept in `journal.pins` beside the journal: a first line naming the format,
/// then one key per line.
///
///     swiftycache.pins 1
///     note-1
///     note-7
///
/// Replaced whole and durably (written and synced under `journal.pins.tmp`, renamed, the
/// directory synced) each time the set changes: a crash leaves the old set or the new one.
/// Beside the journal rather than in it, so that neither the Java `DiskLruCache` (which would
/// call an unknown line corruption and delete the cache) nor an earlier release reads it:
/// both leave it alone, and evict pinned entries as any other.
enum PinRecord {
    static let magic = "swiftycache.pins 1"
    /// A record larger than this is not ours (16 MiB: 130,000 keys of the longest kind).
    static let sizeLimit = 16 << 20

    /// The record's bytes for `keys`.
    static func encode(_ keys: some Sequence<String>) -> [UInt8] {
        var bytes = Array((magic + "\n").utf8)
        for key in keys.sorted() {
            bytes.append(contentsOf: key.utf8)
            bytes.append(UInt8(ascii: "\n"))
        }
        return bytes
    }

    /// The lines a record names after its first; `nil` for bytes that are not a pin record
    /// (another first line). The caller keeps those that name an entry.
    static func decode(_ bytes: [UInt8]) -> [String]? {
        let lines = bytes.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: true)
        guard let first = lines.first, first.elementsEqual(magic.utf8) else { return nil }
        return lines.dropFirst().map { String(decoding: $0, as: UTF8.self) }
    }
}

extension CacheDirectory {
    /// The keys `journal.pins` names; empty when there is none or it is not a pin record.
    func readPins() -> [String] {
        guard let bytes = try? fileSystem.contentsOfSmallFile(atPath: pinsPath, limit: PinRecord.sizeLimit) else {
            return []
        }
        return PinRecord.decode(bytes) ?? []
    }

    /// Replaces `journal.pins` with a record of `keys`, durably; an empty set deletes it.
    func writePins(_ keys: [String]) throws(SystemCallFailure) {
        if keys.isEmpty {
            try fileSystem.removeFileIfPresent(pinsPath)
            return
        }
        try fileSystem.replaceSmallFile(atPath: pinsPath, in: path, with: PinRecord.encode(keys))
    }
}
