extension PackedStorage {
    /// Appends a batch's records, built into one buffer (`records`; each member's a range of
    /// it), with one `write` (and one sync with ``syncsWrites``); returns where each record
    /// starts, in the order of `members` that have one. In a logging directory each member is
    /// written after its prefix, the removals too (a prefix alone), and every member but the
    /// last is marked as continued, so the log applies the batch whole or not at all. A batch
    /// larger than a segment fills a new segment of its own.
    ///
    /// - Complexity: one `write` of `records` as they are; in a logging directory, one copy of
    ///   them between the prefixes first.
    func appendBatch(_ members: [BatchRecord], records: [UInt8]) throws(CacheError) -> [ValueLocation] {
        try state.withLock { (segments) throws(CacheError) -> [ValueLocation] in
            var starts: [Int] = []
            starts.reserveCapacity(members.count)
            let bytes: [UInt8]
            if let identity = segments.logIdentity {
                bytes = Self.logged(members, records: records, identity: identity, starts: &starts)
            } else {
                bytes = Self.gathered(members, records: records, starts: &starts)
            }
            guard !bytes.isEmpty else { return [] }
            let start = try appendLocked(&segments, bytes, key: nil, syncs: syncsWrites)
            return starts.map { ValueLocation(segment: start.segment, offset: start.offset + Int64($0)) }
        }
    }

    /// The records back to back, in order (removals write nothing): the buffer itself when
    /// they fill it in order, as a batch built for one write does; otherwise copied together.
    private static func gathered(_ members: [BatchRecord], records: [UInt8], starts: inout [Int]) -> [UInt8] {
        var end = 0
        var fills = true
        for member in members {
            guard let range = member.record else { continue }
            fills = fills && range.lowerBound == end
            end = range.upperBound
        }
        if fills && end == records.count {
            for member in members { if let range = member.record { starts.append(range.lowerBound) } }
            return records
        }
        var bytes: [UInt8] = []
        for member in members {
            guard let range = member.record?.clamped(to: records.indices) else { continue }
            starts.append(bytes.count)
            bytes.append(contentsOf: records[range])
        }
        return bytes
    }

    /// A logging directory's bytes of a batch: each member's prefix, then its record.
    private static func logged(
        _ members: [BatchRecord], records: [UInt8], identity: UInt64, starts: inout [Int]
    ) -> [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(records.count &+ members.count &* 128)
        for (index, member) in members.enumerated() {
            let isLast = index == members.count - 1
            let range = member.record.map { $0.clamped(to: records.indices) }
            let kind: LogPrefix.Kind =
                range == nil ? (isLast ? .remove : .removeInBatch) : (isLast ? .set : .setInBatch)
            let checksum = range.flatMap { range -> UInt32? in
                guard range.count >= 4 else { return nil }
                return records.withUnsafeBytes {
                    UInt32(littleEndian: $0.loadUnaligned(fromByteOffset: range.lowerBound, as: UInt32.self))
                }
            }
            LogPrefix.append(kind: kind, key: member.key, recordChecksum: checksum, identity: identity, to: &bytes)
            guard let range else { continue }
            starts.append(bytes.count)
            bytes.append(contentsOf: records[range])
        }
        return bytes
    }
}
