import SwiftyCacheCore

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// One of the object cache's small files beside the engine's in a cache directory (the key
/// naming, the schema, the storage class, the warm start): read whole under a size limit,
/// replaced durably (written under `NAME.tmp`, synced, renamed), removed with any staging copy.
/// Their names have no dot, so the engine never takes one for a file of its own.
struct DirectoryRecord: Sendable {
    /// The file's name in the cache directory.
    let fileName: String
    /// What the record is, for errors: "the schema record".
    let description: String
    /// The most bytes read: a bound on the memory a hostile file can take.
    var byteLimit = 256

    /// The record's path in `directory`.
    func path(in directory: URL) -> String {
        directory.appending(path: fileName, directoryHint: .notDirectory).path(percentEncoded: false)
    }

    /// The record's bytes, or `nil` where there is none.
    ///
    /// - Throws: ``ObjectCacheError/Code/diskFailure`` when it cannot be read.
    func bytes(in directory: URL, fileSystem: any FileSystem) throws -> [UInt8]? {
        let path = self.path(in: directory)
        do {
            return try fileSystem.contentsOfSmallFile(atPath: path, limit: byteLimit)
        } catch {
            throw ObjectCacheError.fileFailure(
                "\(description) cannot be read", path: path, operation: .open, cause: error)
        }
    }

    /// The record's first line (without its newline), or `nil` where there is none.
    ///
    /// - Throws: ``ObjectCacheError/Code/diskFailure`` when it cannot be read.
    func line(in directory: URL, fileSystem: any FileSystem) throws -> String? {
        try bytes(in: directory, fileSystem: fileSystem).map {
            String(decoding: $0.prefix { $0 != UInt8(ascii: "\n") }, as: UTF8.self)
        }
    }

    /// Replaces the record with `bytes`, durably.
    ///
    /// - Throws: ``ObjectCacheError/Code/diskFailure`` when it cannot be written.
    func write(_ bytes: [UInt8], in directory: URL, fileSystem: any FileSystem) throws {
        let path = self.path(in: directory)
        do {
            try fileSystem.replaceSmallFile(atPath: path, in: directory.path(percentEncoded: false), with: bytes)
        } catch {
            throw ObjectCacheError.fileFailure(
                "\(description) cannot be written", path: path, operation: .open, cause: error)
        }
    }

    /// Replaces the record with the line `text` and a newline, durably.
    ///
    /// - Throws: ``ObjectCacheError/Code/diskFailure`` when it cannot be written.
    func write(line text: String, in directory: URL, fileSystem: any FileSystem) throws {
        try write(Array("\(text)\n".utf8), in: directory, fileSystem: fileSystem)
    }

    /// Deletes the record and any staging copy a failed replacement left.
    func remove(in directory: URL, fileSystem: any FileSystem) {
        let path = self.path(in: directory)
        try? fileSystem.unlink(path + ".tmp")
        try? fileSystem.unlink(path)
    }
}
