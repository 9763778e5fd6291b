#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// How an ``ObjectCache`` reads a value that an earlier schema version of its type wrote: the
/// old type to decode it as, and the conversion to the current type.
///
/// ```swift
/// let notes = try ObjectCache<String, NoteV3>(
///     directory: dir,
///     configuration: .init(schemaVersion: 3),
///     migrations: [
///         .from(1, as: NoteV1.self) { NoteV3(NoteV2($0)) },
///         .from(2, as: NoteV2.self) { NoteV3($0) },
///     ])
/// ```
///
/// An entry records the schema version it was written in. Reading one of an older version
/// decodes it as that version's type, converts it, and writes the result back in the current
/// version (keeping its creation and expiry dates); ``ObjectCache/migrateAll(progress:)`` does
/// the same for every entry at once. A value that does not decode as the old type, or whose
/// conversion throws, is a miss, counted in ``ObjectCacheStatistics/decodeFailures``; an entry
/// of a version with no migration is a miss too. Opening a cache with a new `schemaVersion`
/// keeps its entries only if there is a migration from the version it was last opened with;
/// otherwise the cache starts empty, as without migrations.
public struct SchemaMigration<Value>: Sendable {
    /// The schema version this migration reads.
    public let version: Int

    /// Decodes a payload in the old type (given its codec, the cache's format and the entry's
    /// attachments) and converts it.
    let migrate:
        @Sendable (
            _ payload: UnsafeRawBufferPointer, _ codec: ObjectCacheFormat.Codec, _ format: ObjectCacheFormat,
            _ attachments: [Data]
        ) throws -> Value

    /// Reads entries written in schema `version` as `oldType`, and converts each with `convert`.
    ///
    /// The entry's payload is decoded with the cache's format (raw bytes when `oldType` is
    /// `Data`). If `oldType` conforms to ``CacheAttachments``, its attachments are restored
    /// before `convert` runs, and `convert` carries them over to the new value.
    ///
    /// - Parameters:
    ///   - version: The schema version the entries were written in.
    ///   - oldType: The value type of that version.
    ///   - convert: The conversion; an error it throws makes the read a miss.
    public static func from<Old: Decodable & Sendable>(
        _ version: Int, as oldType: Old.Type, _ convert: @escaping @Sendable (Old) throws -> Value
    ) -> SchemaMigration {
        SchemaMigration(version: version) { payload, codec, format, attachments in
            var old: Old
            if codec == .raw {
                guard let data = Data(payload) as? Old else {
                    throw DecodingError.typeMismatch(
                        Old.self, .init(codingPath: [], debugDescription: "raw bytes stored, \(Old.self) expected"))
                }
                old = data
            } else {
                old = try format.decode(Old.self, fromBytes: payload)
            }
            if var attachable = old as? any CacheAttachments {
                attachable.restoreAttachments(attachments)
                old = attachable as? Old ?? old
            }
            return try convert(old)
        }
    }

    init(
        version: Int,
        migrate:
            @escaping @Sendable (UnsafeRawBufferPointer, ObjectCacheFormat.Codec, ObjectCacheFormat, [Data]) throws
            -> Value
    ) {
        self.version = version
        self.migrate = migrate
    }

    /// How far ``ObjectCache/migrateAll(progress:)`` has come.
    public struct Progress: Sendable, Hashable {
        /// The entries looked at so far.
        public var examined = 0
        /// The entries on disk when the pass began.
        public var total = 0
        /// The entries converted and written back in the current version.
        public var migrated = 0
        /// The entries that could not be converted (undecodable, a conversion that threw, a
        /// version with no migration), dropped as a read drops them.
        public var failed = 0

        /// Nothing examined yet.
        public init() {}
    }
}
