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
        let (writes, encoded) = try encodeBatch(values.indices) { index, buffer in
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
                Array(writes[start..<end]), operation: .set,
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
            let (writes, written) = try encodeBatch(start..<end) { index, buffer in
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
                try writeBatch(writes, operation: operation) { write in
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

    /// Encodes the values `indices` name into shared buffers, each handed to the engine as slices
    /// of one `Data` (an allocation for every 1 MiB of values rather than two for each value; the
    /// bound keeps a batch of large values from holding two copies of itself at once):
    /// `append(index, &buffer)` appends a value's envelope and payload
    /// (``appendForDisk(_:forKey:created:expires:operation:to:)``). A value that fails goes to
    /// `onFailure` and is left out. Returns the writes, and for each the index it came from and
    /// its payload's size.
    ///
    /// - Complexity: O(values and their encoded bytes).
    @inlinable
    func encodeBatch(
        _ indices: Range<Int>,
        append: (Int, inout [UInt8]) throws -> (engineKey: String, payloadStart: Int, attachments: [Data]),
        onFailure: (any Error) throws -> Void
    ) throws -> (writes: [EngineWrite], encoded: [(index: Int, cost: Int)]) {
        let bufferLimit = 1 << 20
        var encoded: [(index: Int, cost: Int)] = []
        var writes: [EngineWrite] = []
        var entries: [BufferedEntry] = []
        encoded.reserveCapacity(indices.count)
        writes.reserveCapacity(indices.count)
        var buffer: [UInt8] = []
        buffer.reserveCapacity(min(indices.count * 512, bufferLimit))
        for index in indices {
            let start = buffer.count
            do {
                let entry = try append(index, &buffer)
                encoded.append((index, buffer.count - entry.payloadStart))
                entries.append(
                    BufferedEntry(
                        engineKey: entry.engineKey, start: start, payloadStart: entry.payloadStart, end: buffer.count,
                        attachments: entry.attachments))
            } catch {
                try onFailure(error)
            }
            if buffer.count >= bufferLimit || index == indices.last {
                let whole = Data(buffer)
                for entry in entries {
                    var slots = [whole[entry.start..<entry.payloadStart], whole[entry.payloadStart..<entry.end]]
                    if !entry.attachments.isEmpty { slots += entry.attachments }
                    writes.append(EngineWrite(engineKey: entry.engineKey, slots: slots))
                }
                entries.removeAll(keepingCapacity: true)
                buffer.removeAll(keepingCapacity: true)
            }
        }
        return (writes, encoded)
    }

    /// Writes engine entries as one ``DiskLRUCache/WriteBatch``, holding the write stripes of
    /// all their keys (taken in one order, so that batches and single writes never wait on each
    /// other in a cycle).
    ///
    /// Under the stripes, `isWanted` picks the writes still to make (by index) and `whileHeld`
    /// runs with the indices written, before the stripes are released.
    @inlinable
    func writeBatch(
        _ writes: [EngineWrite], operation: ObjectCacheError.Operation,
        isWanted: (Int) -> Bool = { _ in true }, whileHeld: ([Int]) -> Void = { _ in }
    ) throws {
        guard !writes.isEmpty else { return }
        var taken = [Bool](repeating: false, count: writeStripes.count)
        for write in writes { taken[stripeIndex(for: write.engineKey)] = true }
        let stripes = taken.indices.filter { taken[$0] }
        try holdingStripes(stripes[...]) {
            let wanted = writes.indices.filter(isWanted)
            guard !wanted.isEmpty else { return }
            var batch = DiskLRUCache.WriteBatch()
            for index in wanted { batch.setData(writes[index].slots, forKey: writes[index].engineKey) }
            try diskCall(nil, operation: operation) { try disk.write(batch) }
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

/// An entry of a save's batch encoded into the batch's one buffer: its name, where its envelope,
/// payload and end are in the buffer, and its attachments.
@usableFromInline
struct BufferedEntry {
    @usableFromInline let engineKey: String
    @usableFromInline let start: Int
    @usableFromInline let payloadStart: Int
    @usableFromInline let end: Int
    @usableFromInline let attachments: [Data]

    @inlinable
    init(engineKey: String, start: Int, payloadStart: Int, end: Int, attachments: [Data]) {
        self.engineKey = engineKey
        self.start = start
        self.payloadStart = payloadStart
        self.end = end
        self.attachments = attachments
    }
}

/// An engine entry a batch writes: its name and its slots. (A struct, not a tuple: an array of
/// tuples is destroyed element by element through the runtime's generic tuple witness.)
@usableFromInline
struct EngineWrite {
    @usableFromInline let engineKey: String
    @usableFromInline let slots: [Data]

    @inlinable
    init(engineKey: String, slots: [Data]) {
        self.engineKey = engineKey
        self.slots = slots
    }
}
