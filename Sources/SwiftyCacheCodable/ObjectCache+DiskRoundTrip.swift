public import SwiftyCacheCore

#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif

/// The way to and from the disk: loading and decoding an entry, encoding and writing one,
/// saving what the memory tier hands back, and dropping what a read found unusable.
extension ObjectCache {
    @usableFromInline
    struct Loaded {
        @usableFromInline var value: Value
        @usableFromInline var cost: Int
        @usableFromInline var expires: Date?
        /// The entry's creation date.
        @usableFromInline var created: Date

        @inlinable
        init(value: Value, cost: Int, expires: Date?, created: Date) {
            self.value = value
            self.cost = cost
            self.expires = expires
            self.created = created
        }
    }

    /// Reads and decodes the entry for `key` from disk; `nil` for a miss of any kind.
    ///
    /// Inlinable, as the rest of a disk read: it runs specialized for the caller's types,
    /// where unspecialized generic code would look up the metadata of every generic type it
    /// touches (a tenth of a read of a small value). The rare outcomes go out of line.
    @inlinable
    func load(_ key: Key, now: Date) throws -> Loaded? {
        let keyBytes = try encodeKey(key, operation: .value)
        let engineKey = keyHasher.engineKey(for: keyBytes)
        rememberName(engineKey, of: key)
        // One engine call reads every slot: one lock and no snapshot object. An expired or
        // colliding entry costs its payload's read too; both are rare.
        guard let values = try diskCall(key, operation: .value, { try disk.readValues(forKey: engineKey) }) else {
            return nil
        }
        let decoded = decode(values, keyBytes: keyBytes, now: now)
        switch decoded {
        case .loaded(let loaded):
            return loaded
        case .migrated(let loaded, let version):
            storeMigrated(loaded, from: version, key: key, keyBytes: keyBytes)
            return loaded
        default:
            try discard(decoded, key: key, engineKey: engineKey)
            return nil
        }
    }

    /// Reports, counts and (but for a collision) drops an entry a read could not use.
    @usableFromInline
    func discard(_ decoded: Decoded, key: Key, engineKey: String) throws {
        switch decoded {
        case .loaded, .migrated:
            return
        case .collision:
            // Another key hashed to the same name: its entry stays, this key misses.
            eventHandler?(.hashCollision(key: key))
            return
        case .incompatible:
            eventHandler?(.incompatibleEntry(key: key))
        case .expired:
            memory.withLock(for: key) { $0.statistics.expirations += 1 }
            eventHandler?(.expired(key: key))
            try dropFromDisk(engineKey, key: key)
            publish(.expired, key: key)
            return
        case .undecodable(let error):
            memory.withLock(for: key) { $0.statistics.decodeFailures += 1 }
            eventHandler?(.decodingFailed(key: key, error: error))
        }
        try dropFromDisk(engineKey, key: key)
    }

    /// What the slots of an entry hold for `key`.
    @usableFromInline
    enum Decoded {
        case loaded(Loaded)
        /// A value an earlier schema `version` wrote, converted: to write back, its entry's
        /// creation date kept.
        case migrated(Loaded, from: Int)
        /// Another key's entry under the same hashed name.
        case collision
        /// Another format, or no envelope.
        case incompatible
        case expired
        case undecodable(any Error)
    }

    /// Decodes an entry's slots where the read left them, without side effects: the caller
    /// counts, reports and drops.
    @inlinable
    func decode(_ values: ReadValues, keyBytes: Data, now: Date) -> Decoded {
        let codec: ObjectCacheFormat.Codec
        let expires: Date?
        let created: Date
        switch Envelope.check(values, keyBytes: keyBytes, now: now, codec: format.codec, unversioned: unversionedSchema)
        {
        case .payload(let payloadCodec, let payloadExpires, let payloadCreated, let version):
            guard version == schemaVersion else {
                return migrate(
                    values, codec: payloadCodec, expires: payloadExpires, created: payloadCreated, from: version)
            }
            (codec, expires, created) = (payloadCodec, payloadExpires, payloadCreated)
        case .collision: return .collision
        case .incompatible: return .incompatible
        case .expired: return .expired
        }
        do {
            var value = try values.withBytes(ofSlot: 1) { try decodeValue($0, codec: codec) }
            if attachmentCount > 0 { value = restoringAttachments(of: value, from: values) }
            return .loaded(Loaded(value: value, cost: values.length(ofSlot: 1), expires: expires, created: created))
        } catch {
            return .undecodable(error)
        }
    }

    /// `value` with the raw parts of a ``CacheAttachments`` value put back from slots 2 on.
    @usableFromInline
    func restoringAttachments(of value: Value, from values: ReadValues) -> Value {
        guard var attachable = value as? any CacheAttachments else { return value }
        attachable.restoreAttachments((2..<values.count).map { values.data(ofSlot: $0) })
        return attachable as? Value ?? value
    }

    /// `value(forKey:)` without waiting for file I/O, for the `async` overload on Swift's
    /// cooperative pool: a memory hit, or a packed entry whose record is in the page cache
    /// (see `DiskLRUCache.dataIfInMemory(forKey:)`), decoded here. Anything that needs the
    /// disk or a write returns ``ReadResult/needsIO`` before any effect. A value found comes
    /// with the unsaved values the memory tier gave up to make room for it (`mustSave`), for the
    /// caller to write.
    func valueIfInMemory(
        forKey key: Key
    ) throws -> ReadResult<(value: Value, mustSave: [MemoryTier<Key, Value>.PendingSave])> {
        let now = clock()
        switch memory.find(key, now: now) {
        case .hit(let value): return .found((value, []))
        case .expired: return .needsIO
        case .miss: break
        }
        let keyBytes = try encodeKey(key, operation: .value)
        let engineKey = keyHasher.engineKey(for: keyBytes)
        rememberName(engineKey, of: key)
        let othersChanges = memory.othersChangeCount(if: sharesDirectory)
        let slots: [Data]
        switch try diskCall(key, operation: .value, { try disk.dataIfInMemory(forKey: engineKey) }) {
        case .found(let found): slots = found
        case .missing:
            memory.countMiss(key)
            return .missing
        case .needsIO: return .needsIO
        }
        guard case .loaded(let loaded) = decode(ReadValues(slots), keyBytes: keyBytes, now: now) else {
            return .needsIO
        }
        memory.countDiskHit(key)
        let stored = memory.storeLoaded(
            loaded.value, forKey: key, cost: loaded.cost, expires: loaded.expires, created: loaded.created,
            othersSince: othersChanges)
        return .found((loaded.value, stored ? memory.trim(after: key) : []))
    }

    /// Decodes `payload`, valid during the call.
    @inlinable
    func decodeValue(_ payload: UnsafeRawBufferPointer, codec: ObjectCacheFormat.Codec) throws -> Value {
        if codec == .raw { return try rawValue(Data(payload)) }
        return try format.decode(Value.self, fromBytes: payload)
    }

    /// Raw bytes stored for the key, as the value: only a `Data` value can be them.
    @usableFromInline
    func rawValue(_ payload: Data) throws -> Value {
        guard let data = payload as? Value else {
            throw DecodingError.typeMismatch(
                Value.self, .init(codingPath: [], debugDescription: "raw bytes stored, \(Value.self) expected"))
        }
        return data
    }

    /// Encodes and writes one value under its key's write stripe (the caller counts the save),
    /// then runs `whileHeld` with
    /// its encoded size before the stripe is released: what memory learns of the write happens
    /// in the write's order, so that a save of an older value never lands after it (see
    /// ``persist(_:operation:)``).
    @inlinable
    func write<Result>(
        _ value: Value, forKey key: Key, created: Date? = nil, expires: Date?, operation: ObjectCacheError.Operation,
        whileHeld: (Int) -> Result
    ) throws -> (cost: Int, result: Result) {
        let encoded = try encodeForDisk(value, forKey: key, created: created, expires: expires, operation: operation)
        let result = try stripe(for: encoded.engineKey).lock.withLock { writes in
            try diskCall(key, operation: operation) { try disk.setData(encoded.slots, forKey: encoded.engineKey) }
            writes += 1
            return whileHeld(encoded.cost)
        }
        return (encoded.cost, result)
    }

    /// The engine's key and slots for `value` (envelope and payload in one buffer, then the
    /// attachments), and the payload's size; nothing is written. The envelope records the
    /// current schema version (see ``SchemaRecord``) and `created`, or now.
    @inlinable
    func encodeForDisk(
        _ value: Value, forKey key: Key, created: Date? = nil, expires: Date?, operation: ObjectCacheError.Operation
    ) throws -> (engineKey: String, slots: [Data], cost: Int) {
        var buffer: [UInt8] = []
        buffer.reserveCapacity(Envelope.headerSize + 4 + 512)
        let entry = try appendForDisk(
            value, forKey: key, created: created, expires: expires, operation: operation, to: &buffer)
        let whole = Data(buffer)
        var slots = [whole[..<entry.payloadStart], whole[entry.payloadStart...]]
        // Not `+`: its generic append costs a value without attachments as much as the envelope.
        if !entry.attachments.isEmpty { slots += entry.attachments }
        return (entry.engineKey, slots, buffer.count - entry.payloadStart)
    }

    /// Appends the envelope and then the payload of `value` to `buffer`, and returns the
    /// engine's key, where the payload starts in `buffer`, and the value's attachments. On a
    /// failure `buffer` is left as it was: several values share one buffer in a batch (one
    /// allocation and one `Data` for all of them).
    @inlinable
    func appendForDisk(
        _ value: Value, forKey key: Key, created: Date? = nil, expires: Date?, operation: ObjectCacheError.Operation,
        to buffer: inout [UInt8]
    ) throws -> (engineKey: String, payloadStart: Int, attachments: [Data]) {
        let keyBytes = try encodeKey(key, operation: operation)
        let isRaw = Value.self == Data.self
        let envelope = Envelope(
            codec: isRaw ? .raw : format.codec, created: created ?? clock(), expires: expires, keyBytes: keyBytes,
            schemaVersion: schemaVersion == unversionedSchema ? nil : schemaVersion)
        let start = buffer.count
        envelope.append(to: &buffer)
        let payloadStart = buffer.count
        if isRaw {
            buffer.append(contentsOf: reinterpret(value, as: Data.self))
        } else {
            do {
                try format.encode(value, appendingTo: &buffer)
            } catch {
                buffer.removeLast(buffer.count - start)
                throw ObjectCacheError.encodingFailed("value", key: "\(key)", operation: operation, cause: error)
            }
        }
        var attachments: [Data] = []
        if attachmentCount > 0 {
            attachments = (value as? any CacheAttachments)?.attachments ?? []
            guard attachments.count == attachmentCount else {
                buffer.removeLast(buffer.count - start)
                throw ObjectCacheError.attachmentCountMismatch(
                    expected: attachmentCount, got: attachments.count, key: "\(key)", operation: operation)
            }
        }
        let engineKey = keyHasher.engineKey(for: keyBytes)
        rememberName(engineKey, of: key)
        return (engineKey, payloadStart, attachments)
    }

    /// Writes an unsaved value and marks it saved, unless a newer write replaced it meanwhile.
    ///
    /// Under the key's write stripe, the value is written only if memory still holds it
    /// unsaved: a `set` of the key since (which writes and updates memory under the same
    /// stripe) is on disk already, and an older value written after it would replace it there.
    @inlinable
    func persist(_ pending: MemoryTier<Key, Value>.PendingSave, operation: ObjectCacheError.Operation) throws {
        let key = pending.key
        let encoded = try encodeForDisk(pending.value, forKey: key, expires: pending.expires, operation: operation)
        try stripe(for: encoded.engineKey).lock.withLock { writes in
            let isCurrent = memory.inspect(forHash: pending.hash) {
                $0.holdsUnsaved(key, hash: pending.hash, version: pending.version)
            }
            guard isCurrent else { return }
            try diskCall(key, operation: operation) { try disk.setData(encoded.slots, forKey: encoded.engineKey) }
            writes += 1
            memory.withLock(forHash: pending.hash) {
                $0.statistics.saves += 1
                $0.markSaved(key, hash: pending.hash, version: pending.version, cost: encoded.cost)
            }
        }
    }

    /// Applies the memory limits after a store of `key`, saving unsaved values before
    /// dropping them.
    @inlinable
    func trimMemory(after key: Key) {
        let mustSave = memory.trim(after: key)
        if !mustSave.isEmpty { saveAndDrop(mustSave) }
    }

    /// ``trimMemory(after:)`` given the stored key's `hashValue`.
    @inlinable
    func trimMemory(afterHash hash: Int) {
        let mustSave = memory.trim(afterHash: hash)
        if !mustSave.isEmpty { saveAndDrop(mustSave) }
    }

    /// Writes the unsaved values the memory tier gave up, then drops them from memory; a value
    /// that cannot be written stays there, unsaved.
    @inlinable
    func saveAndDrop(_ mustSave: [MemoryTier<Key, Value>.PendingSave]) {
        for pending in mustSave {
            do {
                try persist(pending, operation: .evictFromMemory)
                memory.withLock(forHash: pending.hash) { tier in
                    if tier.removeIfSaved(pending.key, hash: pending.hash) { tier.statistics.memoryEvictions += 1 }
                }
            } catch {
                // Kept in memory, still unsaved: never dropped silently.
                eventHandler?(.saveFailed(key: pending.key, error: error))
            }
        }
    }

    /// Removes an entry a read found unusable (expired, undecodable, another format); a
    /// read-only cache leaves it, and the read is a miss all the same.
    @usableFromInline
    func dropFromDisk(_ engineKey: String, key: Key) throws {
        guard !isReadOnly else { return }
        try diskCall(key, operation: .value) { _ = try disk.removeValue(forKey: engineKey) }
    }
}
