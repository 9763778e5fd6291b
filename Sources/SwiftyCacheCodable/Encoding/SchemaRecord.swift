import SwiftyCacheCore

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The schema version of the entries whose envelope records none (version 1 envelopes, which
/// every release before schema migrations wrote), kept in the directory once the journal's
/// `appVersion` no longer says it.
///
/// Until a cache opens with a new `schemaVersion` and a migration from the journal's, an
/// entry's schema version is the journal's `appVersion`, and no record exists. That open
/// writes the record (the journal's version, one decimal line in `objectcache-schema`)
/// durably, then rewrites the journal's header with the new version; a crash between the two
/// leaves a record that agrees with the old header. A record, once written, is never changed:
/// every entry written after it records its own version.
enum SchemaRecord {
    static let record = DirectoryRecord(fileName: "objectcache-schema", description: "the schema record")

    /// The version the record holds, or `nil` where there is none.
    ///
    /// - Throws: ``ObjectCacheError``: ``ObjectCacheError/Code/diskFailure`` when it cannot be
    ///   read; ``ObjectCacheError/Code/invalidConfiguration`` for a record that is not a
    ///   version (never guessed over).
    static func read(in directory: URL, fileSystem: any FileSystem) throws -> Int? {
        guard let text = try record.line(in: directory, fileSystem: fileSystem) else { return nil }
        guard let version = Int32(text) else {
            throw ObjectCacheError.invalidConfiguration(
                "\(record.path(in: directory)) holds \"\(text)\", which is not a schema version", operation: .open)
        }
        return Int(version)
    }

    /// Records `version` as the one of the directory's unversioned entries, durably.
    static func write(_ version: Int, in directory: URL, fileSystem: any FileSystem) throws {
        try record.write(line: "\(version)", in: directory, fileSystem: fileSystem)
    }

    /// Deletes the record of a directory whose entries the engine has deleted.
    static func remove(in directory: URL, fileSystem: any FileSystem) {
        record.remove(in: directory, fileSystem: fileSystem)
    }
}
