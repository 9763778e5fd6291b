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
    /// The record's name in the cache directory (no dot: the engine never takes it for one of
    /// its own files).
    static let fileName = "objectcache-schema"

    /// The version the record holds, or `nil` where there is none.
    ///
    /// - Throws: ``ObjectCacheError``: ``ObjectCacheError/Code/diskFailure`` when it cannot be
    ///   read; ``ObjectCacheError/Code/invalidConfiguration`` for a record that is not a
    ///   version (never guessed over).
    static func read(in directory: URL, fileSystem: any FileSystem) throws -> Int? {
        let path = self.path(in: directory)
        let recorded: [UInt8]?
        do {
            recorded = try fileSystem.contentsOfSmallFile(atPath: path, limit: 64)
        } catch {
            throw ObjectCacheError.fileFailure(
                "the schema record cannot be read", path: path, operation: .open, cause: error)
        }
        guard let recorded else { return nil }
        let text = String(decoding: recorded.prefix { $0 != UInt8(ascii: "\n") }, as: UTF8.self)
        guard let version = Int32(text) else {
            throw ObjectCacheError.invalidConfiguration(
                "\(path) holds \"\(text)\", which is not a schema version", operation: .open)
        }
        return Int(version)
    }

    /// Records `version` as the one of the directory's unversioned entries, durably.
    static func write(_ version: Int, in directory: URL, fileSystem: any FileSystem) throws {
        let path = self.path(in: directory)
        do {
            try fileSystem.replaceSmallFile(
                atPath: path, in: directory.path(percentEncoded: false), with: Array("\(version)\n".utf8))
        } catch {
            throw ObjectCacheError.fileFailure(
                "the schema record cannot be written", path: path, operation: .open, cause: error)
        }
    }

    /// Deletes the record of a directory whose entries the engine has deleted.
    static func remove(in directory: URL, fileSystem: any FileSystem) {
        let path = self.path(in: directory)
        try? fileSystem.unlink(path + ".tmp")
        try? fileSystem.unlink(path)
    }

    private static func path(in directory: URL) -> String {
        directory.appending(path: fileName, directoryHint: .notDirectory).path(percentEncoded: false)
    }
}
