import Foundation
import SwiftyCacheCodable
import SwiftyCacheCore
import SwiftyCacheTestSupport
import Testing

/// Three versions of one type, each converting from the one before.
struct NoteV1: Codable, Sendable, Equatable {
    var title: String
    var body: String
}

struct NoteV2: Codable, Sendable, Equatable {
    var title: String
    var body: String
    var tags: [String]

    init(title: String, body: String, tags: [String]) {
        (self.title, self.body, self.tags) = (title, body, tags)
    }

    init(_ old: NoteV1) { self.init(title: old.title, body: old.body, tags: ["v1"]) }
}

struct NoteV3: Codable, Sendable, Equatable {
    var heading: String
    var text: String
    var tags: [String]
    var words: Int

    init(_ old: NoteV2) {
        (heading, text, tags) = (old.title, old.body, old.tags)
        words = old.body.split(separator: " ").count
    }
}

/// A value with an attachment, in two versions.
struct RecordingV1: Codable, Sendable, Equatable, CacheAttachments {
    var title: String
    var audio = Data()
    enum CodingKeys: String, CodingKey { case title }
    static let attachmentCount = 1
    var attachments: [Data] { [audio] }
    mutating func restoreAttachments(_ parts: [Data]) { audio = parts[0] }
}

struct RecordingV2: Codable, Sendable, Equatable, CacheAttachments {
    var name: String
    var seconds: Int
    var audio = Data()
    enum CodingKeys: String, CodingKey { case name, seconds }
    static let attachmentCount = 1
    var attachments: [Data] { [audio] }
    mutating func restoreAttachments(_ parts: [Data]) { audio = parts[0] }
}

struct MigrationFailure: Error {}

@Suite struct SchemaMigrationTests {
    let directory = TemporaryDirectory()

    static let formats: [(String, ObjectCacheFormat)] = [
        ("json", .json), ("foundationJSON", .foundationJSON()), ("plist", .propertyList()),
        ("xmlPlist", .propertyList(.xml)),
    ]

    static func v1(_ index: Int) -> NoteV1 { NoteV1(title: "note \(index)", body: "body of note \(index) ünï") }

    func configuration(
        _ version: Int, _ format: ObjectCacheFormat, _ storage: DiskLRUCache.Storage = .packed, readOnly: Bool = false
    ) -> ObjectCacheConfiguration {
        ObjectCacheConfiguration(format: format, schemaVersion: version, storage: storage, isReadOnly: readOnly)
    }

    func writeV1(_ count: Int, to url: URL, format: ObjectCacheFormat = .json, storage: DiskLRUCache.Storage = .packed)
        throws
    {
        let cache = try ObjectCache<String, NoteV1>(directory: url, configuration: configuration(1, format, storage))
        for index in 0..<count { try cache.set(Self.v1(index), forKey: "n\(index)") }
        try cache.close()
    }

    /// The envelope version byte of the entry for `key`: 1 records no schema version, 2 does.
    func envelopeVersion<V>(of key: String, in cache: ObjectCache<String, V>) throws -> UInt8? {
        for name in try cache.disk.keys() {
            guard let envelope = try cache.disk.peekSnapshot(forKey: name)?.readData(at: 0) else { continue }
            // The envelope ends with the key's canonical bytes: a string key's are `s:` and its UTF-8.
            if envelope.count > 28, envelope.suffix(key.utf8.count + 2).elementsEqual(("s:" + key).utf8) {
                return envelope[4]
            }
        }
        return nil
    }

    @Test(arguments: formats, [DiskLRUCache.Storage.packed, .files])
    func threeVersionsMigrateWhenReadAndAreWrittenBack(
        format: (String, ObjectCacheFormat), storage: DiskLRUCache.Storage
    )
        throws
    {
        let url = directory.appending("\(format.0)-\(storage == .files ? "files" : "packed")")
        try writeV1(10, to: url, format: format.1, storage: storage)

        let v2 = try ObjectCache<String, NoteV2>(
            directory: url, configuration: configuration(2, format.1, storage),
            migrations: [.from(1, as: NoteV1.self) { NoteV2($0) }])
        #expect(v2.count == 10)
        for index in 0..<5 { #expect(try v2.value(forKey: "n\(index)") == NoteV2(Self.v1(index))) }
        #expect(v2.statistics.migrations == 5)
        #expect(try envelopeVersion(of: "n0", in: v2) == 2)
        #expect(try envelopeVersion(of: "n7", in: v2) == 1)
        for index in 10..<15 {
            try v2.set(NoteV2(title: "new \(index)", body: "a b c", tags: []), forKey: "n\(index)")
        }
        try v2.close()
        #expect(DiskLRUCache.recordedAppVersion(in: url) == 2)

        let v3 = try ObjectCache<String, NoteV3>(
            directory: url, configuration: configuration(3, format.1, storage),
            migrations: [.from(1, as: NoteV1.self) { NoteV3(NoteV2($0)) }, .from(2, as: NoteV2.self) { NoteV3($0) }])
        for index in 0..<10 { #expect(try v3.value(forKey: "n\(index)") == NoteV3(NoteV2(Self.v1(index)))) }
        for index in 10..<15 {
            #expect(try v3.value(forKey: "n\(index)") == NoteV3(NoteV2(title: "new \(index)", body: "a b c", tags: [])))
        }
        #expect(v3.statistics.migrations == 15)
        #expect(v3.statistics.decodeFailures == 0)
        try v3.close()

        // Written back: the current version reads every value with no migration at all.
        let current = try ObjectCache<String, NoteV3>(
            directory: url, configuration: configuration(3, format.1, storage))
        for index in 0..<15 { #expect(try current.value(forKey: "n\(index)") != nil, "n\(index)") }
        #expect(current.statistics.migrations == 0)
        try current.close()
    }

    @Test func migrateAllConvertsEveryEntryAndReportsProgress() async throws {
        let url = directory.appending("all")
        try writeV1(200, to: url)
        let seen = LockedState<[SchemaMigration<NoteV2>.Progress]>([])
        let cache = try ObjectCache<String, NoteV2>(
            directory: url, configuration: configuration(2, .json),
            migrations: [.from(1, as: NoteV1.self) { NoteV2($0) }])
        let result = try await cache.migrateAll { progress in seen.withLock { $0.append(progress) } }
        #expect(result.total == 200)
        #expect(result.examined == 200)
        #expect(result.migrated == 200)
        #expect(result.failed == 0)
        let reports = seen.withLock { $0 }
        #expect(reports.count >= 4)
        #expect(zip(reports, reports.dropFirst()).allSatisfy { $0.examined < $1.examined })
        #expect(reports.last == result)
        #expect(try await cache.migrateAll().migrated == 0)
        try await cache.close()

        let current = try ObjectCache<String, NoteV2>(directory: url, configuration: configuration(2, .json))
        for index in 0..<200 { #expect(try await current.value(forKey: "n\(index)") == NoteV2(Self.v1(index))) }
        #expect(current.statistics.migrations == 0)
        try await current.close()
    }

    @Test func cancellingMigrateAllStopsBetweenBatchesAndKeepsWhatItConverted() async throws {
        let url = directory.appending("cancel")
        try writeV1(300, to: url)
        let cache = try ObjectCache<String, NoteV2>(
            directory: url, configuration: configuration(2, .json),
            migrations: [.from(1, as: NoteV1.self) { NoteV2($0) }])
        await #expect(throws: CancellationError.self) {
            try await cache.migrateAll { _ in withUnsafeCurrentTask { $0?.cancel() } }
        }
        let rest = try await Task { try await cache.migrateAll() }.value
        #expect(rest.migrated > 0 && rest.migrated < 300)
        #expect(rest.failed == 0)
        try await cache.close()
    }

    @Test func aBumpWithoutAMigrationFromTheLastVersionStartsEmpty() throws {
        let url = directory.appending("bump")
        try writeV1(5, to: url)
        let cache = try ObjectCache<String, NoteV3>(
            directory: url, configuration: configuration(3, .json),
            migrations: [.from(2, as: NoteV2.self) { NoteV3($0) }])
        #expect(cache.count == 0)
        #expect(try cache.value(forKey: "n0") == nil)
        try cache.close()
    }

    @Test func aFailedMigrationIsACountedMissNeverAnotherValue() throws {
        let url = directory.appending("fail")
        try writeV1(6, to: url)
        let events = LockedState<[String]>([])
        let cache = try ObjectCache<String, NoteV2>(
            directory: url, configuration: configuration(2, .json),
            migrations: [
                .from(1, as: NoteV1.self) { old in
                    guard !old.title.hasSuffix("3") else { throw MigrationFailure() }
                    return NoteV2(old)
                }
            ],
            eventHandler: { event in
                if case .decodingFailed(let key, _) = event { events.withLock { $0.append(key) } }
            })
        #expect(try cache.value(forKey: "n3") == nil)
        #expect(try cache.value(forKey: "n2") == NoteV2(Self.v1(2)))
        #expect(cache.statistics.decodeFailures == 1)
        #expect(events.withLock { $0 } == ["n3"])
        try cache.close()

        // A payload that is not the old type: a miss too.
        let wrong = directory.appending("wrong")
        let ints = try ObjectCache<String, Int>(directory: wrong, configuration: configuration(1, .json))
        try ints.set(42, forKey: "n0")
        try ints.close()
        let notes = try ObjectCache<String, NoteV2>(
            directory: wrong, configuration: configuration(2, .json),
            migrations: [.from(1, as: NoteV1.self) { NoteV2($0) }])
        #expect(try notes.value(forKey: "n0") == nil)
        #expect(notes.statistics.decodeFailures == 1)
        try notes.close()
    }

    @Test func migrationsCarryAttachments() async throws {
        let url = directory.appending("attachments")
        let v1 = try ObjectCache<String, RecordingV1>(directory: url, configuration: configuration(1, .json))
        for index in 0..<3 {
            try await v1.set(
                RecordingV1(title: "take \(index)", audio: Data(repeating: UInt8(index), count: 5_000)),
                forKey: "r\(index)")
        }
        try await v1.close()
        let v2 = try ObjectCache<String, RecordingV2>(
            directory: url, configuration: configuration(2, .json),
            migrations: [.from(1, as: RecordingV1.self) { RecordingV2(name: $0.title, seconds: 0, audio: $0.audio) }])
        #expect(
            try await v2.value(forKey: "r0")
                == RecordingV2(name: "take 0", seconds: 0, audio: Data(repeating: 0, count: 5_000)))
        #expect(try await v2.migrateAll().migrated == 2)
        try await v2.close()
        let reopened = try ObjectCache<String, RecordingV2>(directory: url, configuration: configuration(2, .json))
        #expect(try await reopened.value(forKey: "r2")?.audio == Data(repeating: 2, count: 5_000))
        try await reopened.close()
    }

    @Test func aReadOnlyCacheConvertsInMemoryAndWritesNothing() throws {
        let url = directory.appending("read-only")
        try writeV1(3, to: url)
        let cache = try ObjectCache<String, NoteV2>(
            directory: url, configuration: configuration(2, .json, readOnly: true),
            migrations: [.from(1, as: NoteV1.self) { NoteV2($0) }])
        #expect(try cache.value(forKey: "n1") == NoteV2(Self.v1(1)))
        #expect(try envelopeVersion(of: "n1", in: cache) == 1)
        try cache.close()
        #expect(DiskLRUCache.recordedAppVersion(in: url) == 1)
        #expect(!FileManager.default.fileExists(atPath: url.appending(path: "objectcache-schema").path))
    }

    @Test func aValueWrittenWhileAMigrationRanIsNeverOverwritten() throws {
        let url = directory.appending("race")
        try writeV1(1, to: url)
        let box = LockedState<ObjectCache<String, NoteV2>?>(nil)
        let newer = NoteV2(title: "newer", body: "written during the migration", tags: [])
        let cache = try ObjectCache<String, NoteV2>(
            directory: url, configuration: configuration(2, .json, .packed),
            migrations: [
                .from(1, as: NoteV1.self) { old in
                    // Another writer of the key, between the read and the write-back.
                    try box.withLock { $0 }?.set(newer, forKey: "n0")
                    return NoteV2(old)
                }
            ])
        box.withLock { $0 = cache }
        _ = try cache.value(forKey: "n0")
        box.withLock { $0 = nil }
        try cache.close()
        let reopened = try ObjectCache<String, NoteV2>(directory: url, configuration: configuration(2, .json))
        #expect(try reopened.value(forKey: "n0") == newer)
        try reopened.close()
    }

    @Test func aCacheThatNeverMigratedWritesTheEnvelopeEarlierReleasesRead() throws {
        let cache = try ObjectCache<String, NoteV1>(directory: directory.appending("plain"))
        try cache.set(Self.v1(0), forKey: "n0")
        #expect(try envelopeVersion(of: "n0", in: cache) == 1)
        try cache.close()
    }

    @Test func migrationsThatCannotBothApplyAreAnInvalidConfiguration() {
        for migrations: [SchemaMigration<NoteV2>] in [
            [.from(1, as: NoteV1.self) { NoteV2($0) }, .from(1, as: NoteV1.self) { NoteV2($0) }],
            [.from(2, as: NoteV2.self) { $0 }],
        ] {
            #expect {
                try ObjectCache<String, NoteV2>(
                    directory: directory.appending("invalid"), configuration: configuration(2, .json),
                    migrations: migrations)
            } throws: { ($0 as? ObjectCacheError)?.code == .invalidConfiguration }
        }
    }

    @Test func aStoreNamespaceTakesMigrations() throws {
        let root = directory.appending("store")
        try writeV1(2, to: root.appending(path: "notes"))
        let store = CacheStore(directory: root)
        let notes = try store.objects(
            "notes", of: NoteV2.self, configuration: configuration(2, .json),
            migrations: [.from(1, as: NoteV1.self) { NoteV2($0) }])
        #expect(try notes.value(forKey: "n1") == NoteV2(Self.v1(1)))
        try notes.close()
    }
}
