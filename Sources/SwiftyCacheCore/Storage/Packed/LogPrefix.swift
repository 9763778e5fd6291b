/// What a record carries before it in a directory whose segments are its log (a journal under
/// ``Journal/packedLogMagic``): the key and what the record was written for, under a check
/// seeded by the writing session's identity. An open after a crash reads the segments from the
/// journal's last `TAIL` line on and applies every commit whose journal line never reached the
/// disk (``PackedStorage/scanLog(from:identity:_:)``), so a durable commit syncs its segment
/// and nothing else. All integers are little-endian.
///
///     offset   size   field
///     0        4      check: the low 32 bits of XXH64(bytes 4 ..< 6 + k, then the record's
///                     first 4 bytes (its checksum) when one follows, seed: the identity)
///     4        1      kind (``Kind``)
///     5        1      key length k, 1 to 120
///     6        k      the key
///     6 + k    …      the record (``PackedRecord``), unless the kind is a removal
///
/// A sample: identity 0, a set of key `k1` whose record is the one in ``PackedRecord``'s
/// sample (checksum `d9 80 c5 59`), 8 bytes before the record:
///
///     xx xx xx xx  01  02  6b 31  d9 80 c5 59 …
///     └  check  ┘  kind len k  1  └ the record …
///
/// The journal still gets its lines; the prefix only matters for what follows the last `TAIL`.
/// A record's location (what the index and the journal name) is where the record starts,
/// after its prefix, so reads are unchanged; the prefix's bytes are garbage from the start.
enum LogPrefix {
    /// What a logged record was written for.
    enum Kind: UInt8 {
        /// A commit of its own: applied when found past the journal.
        case set = 1
        /// A set of a batch whose later members follow: applied only with the whole batch.
        case setInBatch = 2
        /// A removal of a batch (no record follows): applied as the batch's last member.
        case remove = 3
        /// A removal of a batch whose later members follow.
        case removeInBatch = 4
        /// A record whose journal line was synced before its call returned (compaction's
        /// copies, editors' commits): skipped, never applied from the log.
        case copy = 5

        var hasRecord: Bool { self != .remove && self != .removeInBatch }
        /// Whether the members after it belong to the same batch.
        var continuesBatch: Bool { self == .setInBatch || self == .removeInBatch }
    }

    /// Bytes before the key.
    static let fixedSize = 6

    /// The prefix's size for a key of `keyLength` bytes.
    static func size(keyLength: Int) -> Int { fixedSize &+ keyLength }

    /// The check of a prefix: `fields` are its bytes from offset 4 (kind, key length, key);
    /// `recordChecksum` the record's first 4 bytes when a record follows.
    static func check(fields: UnsafeRawBufferPointer, recordChecksum: UInt32?, identity: UInt64) -> UInt32 {
        var hasher = XXHash64.Stream(seed: identity)
        hasher.update(fields)
        if let recordChecksum {
            withUnsafeBytes(of: recordChecksum.littleEndian) { hasher.update($0) }
        }
        return UInt32(truncatingIfNeeded: hasher.finalize())
    }

    /// Appends the prefix of `kind` for `key` to `buffer`; `record` is the record that follows
    /// (its first 4 bytes are checked with the prefix), `nil` for a removal.
    ///
    /// - Complexity: O(key length).
    static func append(kind: Kind, key: String, record: [UInt8]?, identity: UInt64, to buffer: inout [UInt8]) {
        let recordChecksum = record.flatMap { record -> UInt32? in
            guard record.count >= 4 else { return nil }
            return record.withUnsafeBytes { UInt32(littleEndian: $0.loadUnaligned(as: UInt32.self)) }
        }
        append(kind: kind, key: key, recordChecksum: recordChecksum, identity: identity, to: &buffer)
    }

    /// ``append(kind:key:record:identity:to:)`` for a record given by its checksum (its first
    /// four bytes), `nil` for none.
    static func append(kind: Kind, key: String, recordChecksum: UInt32?, identity: UInt64, to buffer: inout [UInt8]) {
        var key = key
        let start = buffer.count
        buffer.append(contentsOf: [0, 0, 0, 0, kind.rawValue])
        key.withUTF8 { bytes in
            buffer.append(UInt8(truncatingIfNeeded: bytes.count))
            buffer.append(contentsOf: bytes)
        }
        let sum = buffer.withUnsafeBytes { bytes in
            check(
                fields: UnsafeRawBufferPointer(rebasing: bytes[(start + 4)...]), recordChecksum: recordChecksum,
                identity: identity)
        }
        buffer.withUnsafeMutableBytes { $0.storeBytes(of: sum.littleEndian, toByteOffset: start, as: UInt32.self) }
    }
}
