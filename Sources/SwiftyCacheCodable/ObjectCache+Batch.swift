public import SwiftyCacheCore

#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif

/// Several values written as one unit: `set(contentsOf:)`, and `save()` of the unsaved values.
extension ObjectCache {
    /// The most values one engine batch holds; a larger write is split into batches of this
    /// many, each one unit.
    public static var batchLimit: Int { 16_384 }

    /// Stores every value of `values` on disk and in memory as one unit (write-through), as
    /// `write(_:)` does: in packed storage a crash leaves all of them or none,
    /// and with `syncsWrites` they cost the syncs of one `set(_:forKey:expiresAfter:)`. A
    /// later value of a key wins.
    ///
    /// ```swift
    /// try notes.set(contentsOf: [note.id: note, folder.id: folderNote])
    /// ```
    ///
    /// - Parameters:
    ///   - values: Keys and values, such as a `Dictionary`.
    ///   - expiresAfter: How long they live; the default is the cache's ``defaultTimeToLive``.
    /// - Throws: ``ObjectCacheError`` with ``ObjectCacheError/Code/encodingFailed`` (before
    ///   anything is written) or ``ObjectCacheError/Code/diskFailure``; the previous values
    ///   then stay, or, if the journal failed after the write, a key may be gone from disk.
    /// - Complexity: O(values), and one engine write per ``batchLimit`` values.
    @inlinable
    public func set(
        contentsOf values: some Sequence<(key: Key, value: Value)>, expiresAfter: Duration? = nil
    ) throws {
        let now = clock()
        let expires = (expiresAfter ?? defaultTimeToLive).map { now.addingTimeInterval($0.timeInterval) }
        let values = Array(values)
        let hashes = values.map { $0.key.hashValue }
        // Every value is encoded before anything is written.
        let (batch, encoded) = try encodeBatch(values.indices) { index, buffer in
            try appendForDisk(
                values[index].value, forKey: values[index].key, created: now, expires: expires, operation: .set,
                to: &buffer)
        } onFailure: { error in
            throw error
        }
        var start = 0
        while start < values.count {
            let end = min(values.count, start + Self.batchLimit)
            var mayNeedTrim: [Bool] = []
            let othersChanges = memory.othersChangeCount(if: sharesDirectory)
            try writeBatch(
                batch, start..<end, operation: .set,
                whileHeld: { _ in
                    // Under the batch's stripes, as a single set (see `persist`).
                    mayNeedTrim = (start..<end).map { index in
                        let (key, value) = values[index]
                        let hash = hashes[index]
                        return memory.withLock(forHash: hash) { tier in
                            tier.statistics.saves += 1
                            // As in `set`: nothing kept across another process's change.
                            guard memory.othersChangesUnchanged(since: othersChanges) else {
                                tier.remove(key, hash: hash)
                                return false
                            }
                            return tier.storeWritten(
                                value, forKey: key, hash: hash, cost: encoded[index].cost, expires: expires,
                                created: now)
                        }
                    }
                })
            for index in start..<end {
                let key = values[index].key
                if mayNeedTrim[index - start] { trimMemory(afterHash: hashes[index]) }
                publish(.set, key: key)
            }
            start = end
        }
    }

    /// Writes unsaved values as batches and marks them saved, unless a newer write replaced
    /// one meanwhile. A value that cannot be encoded stays unsaved, the others are written.
    ///
    /// - Throws: The first failure.
    @inlinable
    func persistAll(_ pending: [MemoryTier<Key, Value>.PendingSave], operation: ObjectCacheError.Operation) throws {
        var firstFailure: (any Error)?
        var start = 0
        while start < pending.count {
            let end = min(pending.count, start + Self.batchLimit)
            // The values stay in `pending`: the batch refers to them by index, copying none.
            // (`encodeBatch` throws only what `onFailure` throws: nothing here.)
            let (batch, written) = try encodeBatch(start..<end) { index, buffer in
                try appendForDisk(
                    pending[index].value, forKey: pending[index].key, expires: pending[index].expires,
                    operation: operation, to: &buffer)
            } onFailure: { error in
                firstFailure = firstFailure ?? error
            }
            start = end
            let othersChanges = memory.othersChangeCount(if: sharesDirectory)
            do {
                // Under the batch's stripes: a value a `set` replaced since it was picked is left
                // out (the newer one is on disk already), the others are marked saved (or, after
                // another process's change followed meanwhile, dropped: it may be older on disk).
                try writeBatch(batch, 0..<batch.count, operation: operation) { write in
                    let index = written[write].index
                    let hash = pending[index].hash
                    return memory.inspect(forHash: hash) {
                        $0.holdsUnsaved(pending[index].key, hash: hash, version: pending[index].version)
                    }
                } whileHeld: { wrote in
                    for write in wrote {
                        let (index, cost) = written[write]
                        let hash = pending[index].hash
                        memory.withLock(forHash: hash) {
                            $0.statistics.saves += 1
                            $0.markSaved(pending[index].key, hash: hash, version: pending[index].version, cost: cost)
                            if !memory.othersChangesUnchanged(since: othersChanges) {
                                _ = $0.removeIfSaved(pending[index].key, hash: hash)
                            }
                        }
                    }
                }
            } catch {
                firstFailure = firstFailure ?? error
                continue
            }
        }
        if let firstFailure { throw firstFailure }
    }

    /// Encodes the values `indices` name into one engine batch (``DiskLRUCache/EncodedBatch``),
    /// each entry's slots written straight into the batch's buffer: `append(index, &buffer)`
    /// appends a value's envelope and payload
    /// (``appendForDisk(_:forKey:created:expires:operation:to:)``), its attachments follow. A
    /// value that fails goes to `onFailure` and is left out. Returns the batch, and for each of
    /// its entries the index it came from and its payload's size.
    ///
    /// - Complexity: O(values and their encoded bytes), held in one buffer until written.
    ///
    /// Not inlinable: the value's type is `append`'s business, specialized where it is made.
    @usableFromInline
    func encodeBatch(
        _ indices: Range<Int>,
        append: (Int, inout [UInt8]) throws -> (engineKey: String, payloadStart: Int, attachments: [Data]),
        onFailure: (any Error) throws -> Void
    ) throws -> (batch: DiskLRUCache.EncodedBatch, encoded: [(index: Int, cost: Int)]) {
        var batch = disk.makeEncodedBatch()
        var encoded: [(index: Int, cost: Int)] = []
        encoded.reserveCapacity(indices.count)
        // Room for small values (a few hundred bytes each) without growing, up to 1 MiB: past it
        // the buffer grows as an array does, so that a batch of tiny values reserves no more
        // than it fills.
        batch.reserveCapacity(Swift.min(indices.count, 2_048) * 512)
        for index in indices {
            do {
                var cost = 0
                try batch.appendEntry { buffer in
                    let start = buffer.count
                    let entry = try append(index, &buffer)
                    cost = buffer.count - entry.payloadStart
                    guard !entry.attachments.isEmpty else {
                        return (entry.engineKey, SlotLengths(inline: entry.payloadStart - start, cost, count: 2))
                    }
                    var lengths = [entry.payloadStart - start, cost]
                    for attachment in entry.attachments {
                        buffer.append(contentsOf: attachment)
                        lengths.append(attachment.count)
                    }
                    return (entry.engineKey, SlotLengths(lengths))
                }
                encoded.append((index, cost))
            } catch {
                try onFailure(error)
            }
        }
        return (batch, encoded)
    }

    /// Writes entries `entries` of `batch` as one engine batch, holding the write stripes of
    /// all their keys (taken in one order, so that batches and single writes never wait on
    /// each other in a cycle).
    ///
    /// Under the stripes, `isWanted` picks the entries still to write (by index) and
    /// `whileHeld` runs with the indices written, before the stripes are released.
    @usableFromInline
    func writeBatch(
        _ batch: DiskLRUCache.EncodedBatch, _ entries: Range<Int>, operation: ObjectCacheError.Operation,
        isWanted: (Int) -> Bool = { _ in true }, whileHeld: ([Int]) -> Void = { _ in }
    ) throws {
        guard !entries.isEmpty else { return }
        var taken = [Bool](repeating: false, count: writeStripes.count)
        for entry in entries { taken[stripeIndex(for: batch.key(ofEntry: entry))] = true }
        let stripes = taken.indices.filter { taken[$0] }
        try holdingStripes(stripes[...]) {
            let wanted = entries.filter(isWanted)
            guard !wanted.isEmpty else { return }
            try diskCall(nil, operation: operation) { try disk.write(batch, entries: wanted) }
            whileHeld(wanted)
        }
    }

    /// Runs `body` holding the write stripes `indices`, in ascending order.
    @inlinable
    func holdingStripes(_ indices: ArraySlice<Int>, _ body: () throws -> Void) throws {
        guard let first = indices.first else { return try body() }
        try writeStripes[first].lock.withLock { writes in
            writes += 1
            try holdingStripes(indices.dropFirst(), body)
        }
    }
}
