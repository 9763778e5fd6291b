public import SwiftyCacheCore

#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif

/// Values an earlier schema version wrote: read through a ``SchemaMigration`` and written back
/// in the current version, one at a time as they are read or all at once.
extension ObjectCache {
    /// Converts every entry written in an earlier schema version that a migration reads, and
    /// writes it back in the current version (its creation and expiry dates kept). Entries of a
    /// version with no migration, and values that fail theirs, are dropped, as a read of them
    /// drops them. Reads and writes of other callers go on meanwhile; a value written since
    /// the pass read its entry is never overwritten.
    ///
    /// Each entry is rewritten by one write: killed in the middle, the cache holds every entry
    /// in its old version or its new one, never torn, and the next pass (or a read) finishes
    /// the work. Rewriting an entry makes it the most recently used on disk.
    ///
    /// - Parameter progress: Called after each entry with how far the pass has come.
    /// - Returns: The final counts.
    /// - Throws: `CancellationError` when the task is cancelled (what was converted stays
    ///   converted); ``ObjectCacheError``: ``ObjectCacheError/Code/readOnly``, a disk failure.
    /// - Complexity: O(entries), each read once; what is already current is not decoded.
    @discardableResult
    public func migrateAll(
        progress: (@Sendable (SchemaMigration<Value>.Progress) -> Void)? = nil
    ) async throws -> SchemaMigration<Value>.Progress {
        guard !isReadOnly else { throw ObjectCacheError.readOnly(operation: .migrateAll) }
        let names = try await DiskLRUCache.offload {
            try self.diskCall(nil, operation: .migrateAll) { try self.disk.keys() }
        }
        var counts = SchemaMigration<Value>.Progress()
        counts.total = names.count
        // In batches of 64 entries per trip to the I/O pool: cancellation is checked between them.
        var start = 0
        while start < names.count {
            try Task.checkCancellation()
            let batch = Array(names[start..<min(start + 64, names.count)])
            let done = try await DiskLRUCache.offload { try self.migrate(entriesNamed: batch) }
            counts.migrated += done.migrated
            counts.failed += done.failed
            counts.examined += batch.count
            start += batch.count
            progress?(counts)
        }
        return counts
    }

    /// Converts the entries named `names` that are in an earlier version.
    private func migrate(entriesNamed names: [String]) throws -> (migrated: Int, failed: Int) {
        var (migrated, failed) = (0, 0)
        let now = clock()
        for engineKey in names {
            let found = try diskCall(nil, operation: .migrateAll) { () -> (ReadValues, Envelope)? in
                guard let snapshot = try disk.peekSnapshot(forKey: engineKey) else { return nil }
                defer { snapshot.close() }
                let slots = try (0..<disk.valueCount).map { try snapshot.readData(at: $0) }
                guard let envelope = try? Envelope(decoding: slots[0]) else { return nil }
                return (ReadValues(slots), envelope)
            }
            // Gone since the pass listed it, or not an object cache's entry: left alone.
            guard let (values, envelope) = found, (envelope.schemaVersion ?? unversionedSchema) != schemaVersion,
                let key = try? KeyCoding.key(Key.self, from: envelope.keyBytes)
            else { continue }
            let decoded = decode(values, keyBytes: envelope.keyBytes, now: now)
            if case .migrated(let loaded, let version) = decoded {
                if storeMigrated(loaded, from: version, key: key, keyBytes: envelope.keyBytes) {
                    migrated += 1
                }
            } else {
                if case .expired = decoded {} else { failed += 1 }
                try discard(decoded, key: key, engineKey: engineKey)
            }
        }
        return (migrated, failed)
    }

    /// Checks the migrations a cache is opened with, and indexes them by version.
    static func index(_ migrations: [SchemaMigration<Value>], current: Int) throws -> [Int: SchemaMigration<Value>] {
        var byVersion: [Int: SchemaMigration<Value>] = [:]
        for migration in migrations {
            guard migration.version != current else {
                throw ObjectCacheError.invalidConfiguration(
                    "a migration from schema version \(current), the current one", operation: .open)
            }
            guard byVersion.updateValue(migration, forKey: migration.version) == nil else {
                throw ObjectCacheError.invalidConfiguration(
                    "two migrations from schema version \(migration.version)", operation: .open)
            }
        }
        return byVersion
    }

    /// Makes `current` the directory's schema version when `disk` was opened with another
    /// (`openedWith`, a version a migration reads), recording first the version of the
    /// entries whose envelope records none; returns that version.
    static func adoptSchemaVersion(
        _ current: Int, openedWith opened: Int, disk: DiskLRUCache, directory: URL, fileSystem: any FileSystem
    ) throws -> Int {
        let recorded = try SchemaRecord.read(in: directory, fileSystem: fileSystem)
        guard opened != current, !disk.options.isReadOnly else { return recorded ?? opened }
        if recorded == nil { try SchemaRecord.write(opened, in: directory, fileSystem: fileSystem) }
        do {
            try disk.changeAppVersion(to: current)
        } catch {
            throw ObjectCacheError.wrapping(error, key: nil, operation: .open)
        }
        return recorded ?? opened
    }

    /// Converts an entry of schema `version`, as its migration reads it; `.incompatible` when
    /// no migration reads that version. Out of line: the rare path of a read.
    @usableFromInline
    func migrate(
        _ values: ReadValues, codec: ObjectCacheFormat.Codec, expires: Date?, created: Date, from version: Int
    ) -> Decoded {
        guard let migration = migrations[version] else { return .incompatible }
        do {
            let attachments = attachmentCount > 0 ? (2..<values.count).map { values.data(ofSlot: $0) } : []
            let value = try values.withBytes(ofSlot: 1) { try migration.migrate($0, codec, format, attachments) }
            return .migrated(
                Loaded(value: value, cost: values.length(ofSlot: 1), expires: expires, created: created), from: version)
        } catch {
            return .undecodable(error)
        }
    }

    /// Writes a migrated value back in the current version, over the entry it was read from
    /// only: if a write replaced that entry since, the newer value stays. `false` when nothing
    /// was written (read-only, replaced, a failure reported to the event handler).
    @usableFromInline
    @discardableResult
    func storeMigrated(_ loaded: Loaded, from version: Int, key: Key, keyBytes: Data) -> Bool {
        let created = loaded.created
        memory.withLock(for: key) { $0.statistics.migrations += 1 }
        guard !isReadOnly else { return false }
        do {
            let encoded = try encodeForDisk(
                loaded.value, forKey: key, created: created, expires: loaded.expires, operation: .value)
            return try stripe(for: encoded.engineKey).lock.withLock { writes in
                let unchanged = try diskCall(key, operation: .value) { () -> Bool in
                    guard let snapshot = try disk.peekSnapshot(forKey: encoded.engineKey) else { return false }
                    defer { snapshot.close() }
                    guard let envelope = try? Envelope(decoding: snapshot.readData(at: 0)) else { return false }
                    return envelope.keyBytes == keyBytes && envelope.created == created
                        && (envelope.schemaVersion ?? unversionedSchema) == version
                }
                guard unchanged else { return false }
                try diskCall(key, operation: .value) { try disk.setData(encoded.slots, forKey: encoded.engineKey) }
                writes += 1
                return true
            }
        } catch {
            // The entry stays in its old version: the next read converts it again.
            eventHandler?(.saveFailed(key: key, error: error))
            return false
        }
    }
}
