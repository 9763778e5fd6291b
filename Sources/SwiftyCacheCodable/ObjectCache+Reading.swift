import SwiftyCacheCore

#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif

extension ObjectCache {
    /// The value for `key`: from memory, else from disk (which then fills memory); `nil` on a
    /// miss. Expired, undecodable and incompatible entries read as misses and are removed.
    ///
    /// - Throws: ``ObjectCacheError`` for a key that cannot be encoded or a disk failure.
    /// - Complexity: O(1) on a memory hit, with no disk access and no decoding.
    @inlinable
    public func value(forKey key: Key) throws -> Value? {
        // Inlinable, so a memory hit runs specialized for the caller's types. The key is
        // hashed once, for the hit and the rest of a miss.
        let hash = key.hashValue
        if let value = memory.freshHit(key, hash: hash, clock: clock) { return value }
        return try valueAfterMemoryMiss(forKey: key, hash: hash)
    }

    /// The rest of a read: expiry of a value in memory, then the disk.
    ///
    /// Inlinable, with ``load(_:now:)``: a read from disk runs specialized for the caller's
    /// types.
    @inlinable
    func valueAfterMemoryMiss(forKey key: Key) throws -> Value? {
        try valueAfterMemoryMiss(forKey: key, hash: key.hashValue)
    }

    /// ``valueAfterMemoryMiss(forKey:)`` given the key's `hashValue`.
    @inlinable
    func valueAfterMemoryMiss(forKey key: Key, hash: Int) throws -> Value? {
        let now = clock()
        // A tier that keeps nothing has nothing to find: straight to the disk.
        if !memory.keepsNothing {
            switch memory.find(key, hash: hash, now: now) {
            case .hit(let value):
                return value
            case .expired:
                try expireFromMemory(key)
                return nil
            case .miss:
                break
            }
        }
        let othersChanges = memory.othersChangeCount(if: sharesDirectory)
        guard let loaded = try load(key, now: now) else {
            memory.countMiss(hash: hash)
            return nil
        }
        memory.countDiskHit(hash: hash)
        if memory.storeLoaded(
            loaded.value, forKey: key, hash: hash, cost: loaded.cost, expires: loaded.expires,
            created: loaded.created, othersSince: othersChanges)
        {
            trimMemory(afterHash: hash)
        }
        return loaded.value
    }

    /// A read that found the value of `key` expired in memory: counted, reported, removed.
    @usableFromInline
    func expireFromMemory(_ key: Key) throws {
        memory.countMiss(key)
        memory.withLock(for: key) { $0.statistics.expirations += 1 }
        eventHandler?(.expired(key: key))
        if !isReadOnly { try removeFromDisk(key, operation: .value) }
        publish(.expired, key: key)
    }

    /// Reads attachment `index` of the value for `key` straight from its slot, without decoding
    /// the value; `nil` on a miss.
    ///
    /// - Throws: ``ObjectCacheError`` for an index out of range or a disk failure.
    public func attachment(_ index: Int, forKey key: Key) throws -> Data? {
        guard (0..<attachmentCount).contains(index) else {
            throw ObjectCacheError.invalidConfiguration(
                "attachment \(index) is outside 0..<\(attachmentCount)", key: "\(key)", operation: .attachment)
        }
        if let pending = memory.inspect(for: key, { $0.pendingSave(for: key) }),
            let attachable = pending.value as? any CacheAttachments
        {
            return attachable.attachments[index]
        }
        let keyBytes = try encodeKey(key, operation: .attachment)
        return try diskCall(key, operation: .attachment) {
            guard let snapshot = try disk.snapshot(forKey: keyHasher.engineKey(for: keyBytes)) else { return nil }
            defer { snapshot.close() }
            guard let envelope = try? Envelope(decoding: snapshot.readData(at: 0)), envelope.keyBytes == keyBytes,
                !envelope.isExpired(at: clock())
            else { return nil }
            return try snapshot.readData(at: 2 + index)
        }
    }

    /// The original keys of the values on disk, plus unsaved ones in memory (not the hashes).
    /// Entries that cannot be read are left out.
    ///
    /// - Complexity: O(n): it reads every entry's envelope.
    public func keys() -> [Key] {
        var result: [Key] = []
        var seen = Set<Key>()
        let snapshots = (try? disk.snapshots()).map(Array.init) ?? []
        for snapshot in snapshots {
            defer { snapshot.close() }
            guard let envelope = try? Envelope(decoding: snapshot.readData(at: 0)),
                let key = try? KeyCoding.key(Key.self, from: envelope.keyBytes), seen.insert(key).inserted
            else { continue }
            result.append(key)
        }
        for pending in memory.unsaved where seen.insert(pending.key).inserted {
            result.append(pending.key)
        }
        return result
    }
}
