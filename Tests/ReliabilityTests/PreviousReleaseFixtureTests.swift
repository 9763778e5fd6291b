import Foundation
import SwiftyCacheCodable
import SwiftyCacheCore
import SwiftyCacheTestSupport
import Testing

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Caches earlier releases wrote reopen value for value: the directories in
/// `Tests/Fixtures/release-<commit>` were written by the release at that commit with
/// `Tests/Fixtures/release-<commit>.generator.swift.txt` (the same generator for each), whose
/// contents this suite computes again. Each is copied to a temporary directory first (opening
/// writes).
@Suite struct PreviousReleaseFixtureTests {
    /// b6dd705 wrote packed journals without line checks; 2d5dc03 with them, and a space
    /// reserve; fac2db5 the same as 2d5dc03: SHA-256 names, no key naming record, JSON by
    /// Foundation's coders, which this release reads with its own. acbc5fb, the release before
    /// this one (its index was a dictionary of `String`s, this one's a key arena), wrote
    /// xxHash names with their `objectcache-keys` record and JSON by the built-in coder.
    static let releases = [
        "b6dd705", "2d5dc03", "fac2db5", "acbc5fb", "3fd6ec7", "4641d06", "d1fdf6b", "aedfbf8", "77faef8", "3782518",
        "393bff7", "b66caf2", "ebf3f56",
    ]

    /// The object caches each release's generator wrote: folder, format, storage.
    static let objectFixtures: [(String, ObjectCacheFormat, DiskLRUCache.Storage)] = [
        ("object-json-packed", .json, .packed),
        ("object-plist-packed", .propertyList(), .packed),
        ("object-xmlplist-packed", .propertyList(.xml), .packed),
        ("object-json-files", .json, .files),
    ]

    static func fixtures(_ release: String) -> URL {
        URL(filePath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .appending(path: "Fixtures/release-\(release)", directoryHint: .isDirectory)
    }

    static func engineValue(_ index: Int, slot: Int, round: Int) -> Data {
        let length = index % 7 == 3 && slot == 1 ? 20_000 + index : 10 + (index * 37 + slot * 11) % 300
        var bytes = [UInt8]()
        bytes.reserveCapacity(length)
        var state = UInt64(index * 1_000 + slot * 100 + round)
        for _ in 0..<length {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            bytes.append(UInt8(truncatingIfNeeded: state >> 33))
        }
        return Data(bytes)
    }

    struct Note: Codable, Equatable {
        var id: Int
        var title: String
        var body: String
        var tags: [String]
        var created: Date
        var pinned: Bool
        var rating: Double?
    }

    static func note(_ index: Int) -> Note {
        Note(
            id: index, title: "Note \(index) — ünïcödé \"quoted\"",
            body: String(repeating: "body \(index) ", count: 1 + index % 9),
            tags: (0..<(index % 4)).map { "tag\($0)" },
            created: Date(timeIntervalSince1970: 1_700_000_000 + Double(index) * 3600.5),
            pinned: index % 2 == 0, rating: index % 3 == 0 ? nil : Double(index) / 4)
    }

    /// Expects the 32 entries every release's engine fixture holds, value for value.
    static func expectEngineValues(in cache: DiskLRUCache) throws {
        for index in 0..<40 {
            let values = try cache.data(forKey: "key-\(index)")
            if index % 5 == 1 {
                #expect(values == nil, "key-\(index) was removed")
            } else {
                let round = index % 3 == 0 ? 1 : 0
                #expect(values == [0, 1].map { engineValue(index, slot: $0, round: round) }, "key-\(index)")
            }
        }
        #expect(cache.count == 32)
    }

    /// A copy of fixture `name` of `release` to open.
    static func copy(_ name: String, of release: String) throws -> (TemporaryDirectory, URL) {
        let directory = TemporaryDirectory(name)
        try FileManager.default.createDirectory(at: directory.url, withIntermediateDirectories: true)
        let url = directory.appending(name)
        try FileManager.default.copyItem(at: fixtures(release).appending(path: name), to: url)
        return (directory, url)
    }

    /// The saved index an earlier release left at its clean close (the first form,
    /// `SCIDX001`, or from 3782518 on the image, `SCIDX002`) still loads: the copy's marker is rewritten to vouch for the copied journal
    /// (a copy is another file, which voids the marker), and the open loads the index instead of
    /// replaying, with every value as the release wrote it.
    @Test(arguments: [("aedfbf8", "SCIDX001"), ("77faef8", "SCIDX001"), ("3782518", "SCIDX002")])
    func anEarlierReleasesSavedIndexLoads(release: String, form: String) throws {
        let (temporary, url) = try Self.copy("engine-files", of: release)
        _ = temporary
        let marker = url.appending(path: "journal.clean")
        var bytes = try Data(contentsOf: marker)
        let lineEnd = try #require(bytes.firstIndex(of: UInt8(ascii: "\n")))
        #expect(bytes.range(of: Data(form.utf8)) != nil)
        var status = stat()
        try #require(stat(url.appending(path: "journal").path(percentEncoded: false), &status) == 0)
        let line =
            "\(status.st_size) \(status.st_dev) \(status.st_ino) \(status.st_mtim.tv_sec) \(status.st_mtim.tv_nsec)"
        bytes.replaceSubrange(bytes.startIndex..<lineEnd, with: Data(line.utf8))
        try bytes.write(to: marker)
        let cache = try DiskLRUCache(
            directory: url, appVersion: 3, valueCount: 2, maxSize: 1 << 30, options: .init(storage: .files))
        #expect(cache.recoveryReport.loadedSavedIndex)
        try Self.expectEngineValues(in: cache)
        try cache.close()
    }

    @Test(
        arguments: releases,
        [
            ("engine-files", DiskLRUCache.Storage.files), ("engine-files-unclosed", .files),
            ("engine-packed", .packed), ("engine-packed-unclosed", .packed),
        ])
    func anEngineDirectoryReopensValueForValue(
        release: String, directory: (name: String, storage: DiskLRUCache.Storage)
    )
        throws
    {
        let (name, storage) = directory
        let (temporary, url) = try Self.copy(name, of: release)
        _ = temporary
        _ = directory
        for pass in 0..<5 {
            // Five times: as the release left it, as this release closed it, after this release
            // rewrote the journal (packed storage: `BLOCK` lines), opened with `syncsWrites`
            // (packed storage: the directory becomes its own log), and after a crash of that.
            let cache = try DiskLRUCache(
                directory: url, appVersion: 3, valueCount: 2, maxSize: 1 << 30,
                options: .init(syncsWrites: pass >= 3, storage: storage))
            #expect(cache.recoveryReport.wipeReason == nil)
            #expect(cache.recoveryReport.unknownFiles.isEmpty)
            try Self.expectEngineValues(in: cache)
            if pass == 1 { try cache.compact() }
            if pass == 3 {
                let journal = try Data(contentsOf: url.appending(path: "journal"))
                let magic = String(decoding: journal.prefix { $0 != UInt8(ascii: "\n") }, as: UTF8.self)
                #expect(magic == (storage == .files ? "libcore.io.DiskLruCache" : "swiftycache.packed-log"))
                cache.simulateCrash()
            } else {
                try cache.close()
            }
        }
    }

    @Test(
        arguments: releases,
        objectFixtures)
    func anObjectCacheReopensValueForValue(
        release: String, fixture: (name: String, format: ObjectCacheFormat, storage: DiskLRUCache.Storage)
    ) throws {
        let (name, format, storage) = fixture
        let (directory, url) = try Self.copy(name, of: release)
        _ = directory
        let cache = try ObjectCache<String, Note>(
            directory: url, configuration: .init(format: format, storage: storage))
        for index in 0..<25 {
            var expected = Self.note(index)
            // XML property lists keep dates to the second (a property of the format in every release).
            if name.contains("xml") {
                expected.created = Date(timeIntervalSince1970: expected.created.timeIntervalSince1970.rounded(.down))
            }
            #expect(try cache.value(forKey: "note-\(index)") == expected, "note-\(index)")
        }
        try cache.close()
    }

    /// Every packed directory an earlier release wrote opens in the sharing mode too (two
    /// caches at once, value for value, each seeing the other's write), with and without the
    /// clean close it was left with, and reopens alone afterwards as the release left it.
    @Test(arguments: releases, ["engine-packed", "engine-packed-unclosed"])
    func anEnginePackedDirectoryOpensShared(release: String, name: String) throws {
        let (temporary, url) = try Self.copy(name, of: release)
        _ = temporary
        var options = DiskLRUCache.Options(storage: .packed)
        options.sharing = .processes
        let first = try DiskLRUCache(directory: url, appVersion: 3, valueCount: 2, maxSize: 1 << 30, options: options)
        let second = try DiskLRUCache(directory: url, appVersion: 3, valueCount: 2, maxSize: 1 << 30, options: options)
        #expect(first.recoveryReport.wipeReason == nil)
        try Self.expectEngineValues(in: first)
        try Self.expectEngineValues(in: second)
        try first.setData([Data("a".utf8), Data("b".utf8)], forKey: "shared-new")
        #expect(try second.data(forKey: "shared-new") == [Data("a".utf8), Data("b".utf8)])
        _ = try second.removeValue(forKey: "shared-new")
        try first.close()
        try second.close()
        let alone = try DiskLRUCache(
            directory: url, appVersion: 3, valueCount: 2, maxSize: 1 << 30, options: .init(storage: .packed))
        try Self.expectEngineValues(in: alone)
        #expect(try alone.data(forKey: "shared-new") == nil)
        try alone.close()
    }

    @Test(arguments: releases, objectFixtures.filter { $0.2 == DiskLRUCache.Storage.packed })
    func anObjectCacheOpensShared(
        release: String, fixture: (name: String, format: ObjectCacheFormat, storage: DiskLRUCache.Storage)
    ) throws {
        let (name, format, _) = fixture
        let (directory, url) = try Self.copy(name, of: release)
        _ = directory
        var configuration = ObjectCacheConfiguration(format: format)
        configuration.sharing = .processes
        let first = try ObjectCache<String, Note>(directory: url, configuration: configuration)
        let second = try ObjectCache<String, Note>(directory: url, configuration: configuration)
        for index in 0..<25 {
            var expected = Self.note(index)
            if name.contains("xml") {
                expected.created = Date(timeIntervalSince1970: expected.created.timeIntervalSince1970.rounded(.down))
            }
            #expect(try first.value(forKey: "note-\(index)") == expected, "note-\(index)")
            #expect(try second.value(forKey: "note-\(index)") == expected, "note-\(index)")
        }
        try first.close()
        try second.close()
    }

    /// `Note` with a field added: the next schema version of the fixtures' values.
    struct RatedNote: Codable, Equatable {
        var note: Note
        var stars: Int
    }

    /// A cache an earlier release wrote (in schema version 1, the default) opens in version 2
    /// with a migration from 1: every value converted, none lost to a wipe, and the
    /// conversions written back so that a later open needs no migration.
    @Test(
        arguments: releases,
        objectFixtures)
    func anObjectCacheMigratesToANewSchemaVersion(
        release: String, fixture: (name: String, format: ObjectCacheFormat, storage: DiskLRUCache.Storage)
    ) async throws {
        let (name, format, storage) = fixture
        let (directory, url) = try Self.copy(name, of: release)
        _ = directory
        let configuration = ObjectCacheConfiguration(format: format, schemaVersion: 2, storage: storage)
        let cache = try ObjectCache<String, RatedNote>(
            directory: url, configuration: configuration,
            migrations: [.from(1, as: Note.self) { RatedNote(note: $0, stars: $0.id % 5) }])
        #expect(try await cache.migrateAll().migrated == 25)
        try await cache.close()
        let reopened = try ObjectCache<String, RatedNote>(directory: url, configuration: configuration)
        for index in 0..<25 {
            var expected = Self.note(index)
            if name.contains("xml") {
                expected.created = Date(timeIntervalSince1970: expected.created.timeIntervalSince1970.rounded(.down))
            }
            #expect(
                try await reopened.value(forKey: "note-\(index)") == RatedNote(note: expected, stars: index % 5),
                "note-\(index)")
        }
        try await reopened.close()
    }

    /// What b66caf2 added on disk reopens: envelopes that record their schema version, the
    /// `objectcache-schema` record and a journal whose `appVersion` moved on (a cache moved from
    /// version 1 to 2, some entries written back, some written in 2), and pins in
    /// `journal.pins`, in both storages.
    @Test func theSchemaVersionsAndPinsOfB66caf2Reopen() async throws {
        let (directory, url) = try Self.copy("object-json-packed-schema2", of: "b66caf2")
        _ = directory
        let identity = SchemaMigration<Note>.from(1, as: Note.self) { $0 }
        let cache = try ObjectCache<String, Note>(
            directory: url, configuration: .init(schemaVersion: 2), migrations: [identity])
        for index in 0..<35 { #expect(try await cache.value(forKey: "note-\(index)") == Self.note(index)) }
        #expect(try [0, 7, 30].allSatisfy { try cache.isPinned("note-\($0)") })
        #expect(try !cache.isPinned("note-1"))
        try await cache.close()
        // On to version 3, from a fresh copy (the reads above wrote version 1 entries back in
        // 2): entries of versions 1 and 2 both convert.
        let (fresh, freshURL) = try Self.copy("object-json-packed-schema2", of: "b66caf2")
        _ = fresh
        let rated = try ObjectCache<String, RatedNote>(
            directory: freshURL, configuration: .init(schemaVersion: 3),
            migrations: [
                .from(1, as: Note.self) { RatedNote(note: $0, stars: 1) },
                .from(2, as: Note.self) { RatedNote(note: $0, stars: 2) },
            ])
        #expect(try await rated.migrateAll().migrated == 35)
        for index in 0..<35 {
            let stars = try #require(try await rated.value(forKey: "note-\(index)")).stars
            #expect(stars == (index < 5 || index >= 25 ? 2 : 1), "note-\(index)")
        }
        try await rated.close()

        for (name, storage) in [("engine-files-pins", DiskLRUCache.Storage.files), ("engine-packed-pins", .packed)] {
            let (temporary, pinned) = try Self.copy(name, of: "b66caf2")
            _ = temporary
            let engine = try DiskLRUCache(
                directory: pinned, appVersion: 3, valueCount: 2, maxSize: 1 << 30, options: .init(storage: storage))
            #expect(Set(try engine.pinnedKeys()) == ["key-0", "key-2", "key-5"])
            for index in 0..<40 {
                #expect(
                    try await engine.data(forKey: "key-\(index)")
                        == [0, 1].map { Self.engineValue(index, slot: $0, round: 0) })
            }
            try await engine.close()
        }
    }
}
