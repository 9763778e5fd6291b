import Foundation
import SwiftyCacheCodable
import SwiftyCacheCore
import SwiftyCacheTestSupport
import Testing

@Suite(.tags(.concurrency, .lockFreeReads)) struct ObjectCacheTests {
    let directory = TemporaryDirectory()

    @Test func roundTripsStringIntURLUUIDAndStructKeys() throws {
        let strings = try ObjectCache<String, Note>(directory: directory.appending("s"))
        try strings.set(sampleNote, forKey: "Any Key / with ünïcode")
        #expect(try strings.value(forKey: "Any Key / with ünïcode") == sampleNote)

        let ints = try ObjectCache<Int, String>(directory: directory.appending("i"))
        try ints.set("forty-two", forKey: 42)
        let urls = try ObjectCache<URL, Int>(directory: directory.appending("u"))
        let url = try #require(URL(string: "https://example.com/notes/a.html?x=1"))
        try urls.set(7, forKey: url)
        let uuids = try ObjectCache<UUID, Bool>(directory: directory.appending("g"))
        let uuid = UUID()
        try uuids.set(true, forKey: uuid)
        let composite = try ObjectCache<CompositeKey, [Int]>(directory: directory.appending("c"))
        try composite.set([1, 2, 3], forKey: CompositeKey(user: 1, page: "home"))

        // Read back from disk, not memory.
        for cache in [ints, urls, uuids, composite] as [any ClearableMemory] { cache.clearMemory() }
        #expect(try ints.value(forKey: 42) == "forty-two")
        #expect(try ints.value(forKey: 43) == nil)
        #expect(try urls.value(forKey: url) == 7)
        #expect(try uuids.value(forKey: uuid) == true)
        #expect(try composite.value(forKey: CompositeKey(user: 1, page: "home")) == [1, 2, 3])
        #expect(try composite.value(forKey: CompositeKey(user: 2, page: "home")) == nil)
        #expect(urls.keys() == [url])
        #expect(composite.keys() == [CompositeKey(user: 1, page: "home")])
        #expect(ints.statistics.diskHits == 1)
    }

    @Test(arguments: [
        ("json", ObjectCacheFormat.json),
        ("binary plist", ObjectCacheFormat.propertyList(.binary)),
        ("xml plist", ObjectCacheFormat.propertyList(.xml)),
    ])
    func roundTripsInEveryFormat(name: String, format: ObjectCacheFormat) throws {
        let cache = try ObjectCache<String, Note>(directory: directory.url, configuration: .init(format: format))
        try cache.set(sampleNote, forKey: "n")
        try cache.close()
        let reopened = try ObjectCache<String, Note>(directory: directory.url, configuration: .init(format: format))
        #expect(try reopened.value(forKey: "n") == sampleNote)
        #expect(reopened.statistics.diskHits == 1)
        let payload = try engineSlot(1, of: "s:n", in: reopened)
        switch name {
        case "json": #expect(payload.first == UInt8(ascii: "{"))
        case "binary plist": #expect(payload.starts(with: Data("bplist".utf8)))
        default: #expect(payload.starts(with: Data("<?xml".utf8)))
        }
    }

    @Test func configuredEncodersAreUsed() throws {
        var encoder = DirectJSONEncoder()
        encoder.dateEncodingStrategy = .iso8601
        var decoder = DirectJSONDecoder()
        decoder.dateDecodingStrategy = .iso8601
        let format = ObjectCacheFormat.json(encoder: encoder, decoder: decoder)
        let cache = try ObjectCache<String, Note>(directory: directory.url, configuration: .init(format: format))
        try cache.set(sampleNote, forKey: "n")
        let payload = String(decoding: try engineSlot(1, of: "s:n", in: cache), as: UTF8.self)
        #expect(payload.contains("1970-01-01T00:16:40Z"))
        cache.clearMemory()
        #expect(try cache.value(forKey: "n") == sampleNote)
    }

    @Test func dataValuesAreStoredRaw() throws {
        let cache = try ObjectCache<String, Data>(directory: directory.url)
        let bytes = Data((0..<4096).map { UInt8(truncatingIfNeeded: $0) })
        try cache.set(bytes, forKey: "blob")
        #expect(try engineSlot(1, of: "s:blob", in: cache) == bytes)
        cache.clearMemory()
        #expect(try cache.value(forKey: "blob") == bytes)
    }

    @Test func attachmentsLiveRawInTheirOwnSlots() throws {
        let cache = try ObjectCache<String, VoiceNote>(directory: directory.url)
        let audio = Data((0..<10_000).map { UInt8(truncatingIfNeeded: $0 * 13) })
        try cache.set(VoiceNote(title: "memo", audio: audio), forKey: "v1")
        #expect(try engineSlot(2, of: "s:v1", in: cache) == audio)
        let payload = String(decoding: try engineSlot(1, of: "s:v1", in: cache), as: UTF8.self)
        #expect(payload == #"{"title":"memo"}"#)
        cache.clearMemory()
        #expect(try cache.attachment(0, forKey: "v1") == audio)
        #expect(cache.statistics.diskHits == 0)  // read without decoding the value
        #expect(try cache.value(forKey: "v1") == VoiceNote(title: "memo", audio: audio))
        #expect(throws: ObjectCacheError.self) { try cache.attachment(1, forKey: "v1") }
        #expect(try cache.attachment(0, forKey: "absent") == nil)
    }

    @Test func hashCollisionIsAMissNeverAnotherKeysValue() throws {
        let events = LockedState<[String]>([])
        let cache = try ObjectCache<String, String>(
            directory: directory.url, configuration: .init(keyHasher: ConstantHasher()),
            eventHandler: { event in if case .hashCollision(let key) = event { events.withLock { $0.append(key) } } })
        try cache.set("value of a", forKey: "a")
        cache.clearMemory()
        #expect(try cache.value(forKey: "b") == nil)
        #expect(events.withLock { $0 } == ["b"])
        #expect(try cache.value(forKey: "a") == "value of a")
        try cache.set("value of b", forKey: "b")  // takes the slot over
        cache.clearMemory()
        #expect(try cache.value(forKey: "a") == nil)
        #expect(try cache.value(forKey: "b") == "value of b")
    }

    @Test func writeBackKeepsUnsavedValuesUntilSaveAndACrashLosesOnlyThose() throws {
        do {
            let cache = try ObjectCache<String, String>(directory: directory.url)
            cache.setUnsaved("one", forKey: "saved")
            cache.setUnsaved("two", forKey: "unsaved")
            #expect(cache.hasUnsavedValue(forKey: "saved"))
            #expect(try cache.value(forKey: "unsaved") == "two")
            #expect(try cache.disk.keys().isEmpty)  // nothing on disk yet
            try cache.save(forKey: "saved")
            #expect(!cache.hasUnsavedValue(forKey: "saved"))
            #expect(cache.hasUnsavedValue(forKey: "unsaved"))
            // Dropped without close() or save(): like a crash.
        }
        let reopened = try ObjectCache<String, String>(directory: directory.url)
        #expect(try reopened.value(forKey: "saved") == "one")
        #expect(try reopened.value(forKey: "unsaved") == nil)
    }

    @Test func saveWritesEveryUnsavedValue() throws {
        let cache = try ObjectCache<Int, String>(directory: directory.url)
        for i in 0..<10 { cache.setUnsaved("v\(i)", forKey: i) }
        try cache.save()
        #expect(cache.statistics.saves == 10)
        try cache.close()
        let reopened = try ObjectCache<Int, String>(directory: directory.url)
        #expect(try (0..<10).map { try reopened.value(forKey: $0) } == (0..<10).map { "v\($0)" })
    }

    @Test func aTierWithNoRoomKeepsNothingAndNeverServesAStaleValue() throws {
        let cache = try ObjectCache<String, String>(directory: directory.url, configuration: .init(memoryLimit: 0))
        try cache.set("one", forKey: "k")
        #expect(cache.memoryCount == 0)
        #expect(try cache.value(forKey: "k") == "one")
        #expect(try cache.value(forKey: "k") == "one")
        #expect(cache.memoryCount == 0)
        #expect(cache.statistics.diskHits == 2)
        #expect(cache.statistics.memoryHits == 0)
        #expect(cache.statistics.saves == 1)
        // A write-through replaces nothing stale: the next read and a later save see "two".
        try cache.set("two", forKey: "k")
        try cache.save()
        #expect(try cache.value(forKey: "k") == "two")
        #expect(cache.statistics.saves == 2)
        try cache.close()
        let reopened = try ObjectCache<String, String>(directory: directory.url)
        #expect(try reopened.value(forKey: "k") == "two")
    }

    @Test func aWriteThroughReplacesAnUnsavedValueInMemory() throws {
        let cache = try ObjectCache<String, String>(directory: directory.url, configuration: .init(memoryLimit: 10))
        cache.setUnsaved("unsaved", forKey: "k")
        #expect(cache.hasUnsavedValue(forKey: "k"))
        try cache.set("written", forKey: "k")
        #expect(!cache.hasUnsavedValue(forKey: "k"))
        try cache.save()  // must not write the older unsaved value over the new one
        try cache.close()
        let reopened = try ObjectCache<String, String>(directory: directory.url)
        #expect(try reopened.value(forKey: "k") == "written")
    }

    @Test func memoryEvictionSavesUnsavedValuesFirst() throws {
        do {
            let cache = try ObjectCache<Int, String>(directory: directory.url, configuration: .init(memoryLimit: 2))
            for i in 0..<6 { cache.setUnsaved("v\(i)", forKey: i) }
            #expect(cache.memoryCount == 2)
            #expect(cache.statistics.memoryEvictions == 4)
            #expect(try cache.disk.keys().count == 4)
            // Released here without save() or close(), as a crash would.
        }
        let reopened = try ObjectCache<Int, String>(directory: directory.url)
        // The four evicted ones were saved; the two still in memory were never saved (a crash).
        #expect(try (0..<4).map { try reopened.value(forKey: $0) } == ["v0", "v1", "v2", "v3"])
    }

    @Test func clearMemorySavesFirstAndAFailedSaveKeepsTheValueUnsaved() throws {
        let failedSaves = LockedState<[String]>([])
        let cache = try ObjectCache<String, String>(
            directory: directory.url,
            eventHandler: { event in if case .saveFailed(let key, _) = event { failedSaves.withLock { $0.append(key) } }
            })
        cache.setUnsaved("A", forKey: "a")
        cache.clearMemory()
        #expect(cache.memoryCount == 0)
        #expect(try cache.value(forKey: "a") == "A")
        #expect(cache.statistics.diskHits == 1)

        cache.setUnsaved("B", forKey: "b")
        try cache.disk.close()  // every disk write fails from now on
        #expect(throws: ObjectCacheError.self) { try cache.save() }
        cache.clearMemory(forKey: "b")
        cache.clearMemory()
        // Not dropped: still in memory, still unsaved, and both failures were reported.
        #expect(failedSaves.withLock { $0 } == ["b", "b"])
        #expect(cache.hasUnsavedValue(forKey: "b"))
        #expect(cache.memoryCount == 1)
        #expect(try cache.value(forKey: "b") == "B")
    }

    @Test func memoryByteLimitBoundsSavedValues() throws {
        let cache = try ObjectCache<Int, String>(
            directory: directory.url, configuration: .init(memoryLimit: 100, memoryByteLimit: 100))
        for i in 0..<10 { try cache.set(String(repeating: "x", count: 30), forKey: i) }
        #expect(cache.memoryCount == 3)  // 32 encoded bytes each
        #expect(try cache.value(forKey: 0) != nil)  // still on disk
    }

    @Test func memoryHitsDoNotTouchTheDisk() throws {
        let cache = try ObjectCache<String, Note>(directory: directory.url)
        try cache.set(sampleNote, forKey: "n")
        let before = cache.disk.statistics
        for _ in 0..<100 { #expect(try cache.value(forKey: "n") == sampleNote) }
        #expect(cache.disk.statistics == before)
        #expect(cache.statistics.memoryHits == 100)
    }

    @Test func preloadFillsMemoryFromDisk() async throws {
        let cache = try ObjectCache<Int, String>(directory: directory.url)
        for i in 0..<20 { try await cache.set("v\(i)", forKey: i) }
        cache.clearMemory()
        await cache.preload(Array(0..<10) + [500, 501])
        #expect(cache.memoryCount == 10)
        for i in 0..<10 { #expect(try await cache.value(forKey: i) == "v\(i)") }
        #expect(cache.statistics.memoryHits == 10)
        #expect(cache.statistics.diskHits == 0)
    }

    @Test func entriesExpireByTheInjectedClock() throws {
        let clock = TestClock()
        let cache = try ObjectCache<String, String>(
            directory: directory.url, configuration: .init(defaultTimeToLive: .seconds(3600), clock: clock.function))
        try cache.set("short", forKey: "a", expiresAfter: .seconds(60))
        try cache.set("default", forKey: "b")
        try cache.set("forever?", forKey: "c", expiresAfter: .seconds(86_400))
        clock.advance(by: 61)
        #expect(try cache.value(forKey: "a") == nil)
        #expect(try cache.disk.keys().count == 2)  // removed lazily on that read
        #expect(try cache.value(forKey: "b") == "default")
        clock.advance(by: 3600)
        cache.clearMemory()
        #expect(try cache.removeExpired() == 1)
        #expect(cache.keys() == ["c"])
        #expect(cache.statistics.expirations == 2)
    }

    @Test func undecodableValueIsACountedMissAndRemoved() throws {
        struct OldPage: Codable, Sendable { var title: String }
        struct NewPage: Codable, Sendable {
            var title: String
            var words: Int
        }
        let old = try ObjectCache<String, OldPage>(directory: directory.url)
        try old.set(OldPage(title: "t"), forKey: "p")
        try old.close()
        let events = LockedState(0)
        let new = try ObjectCache<String, NewPage>(
            directory: directory.url,
            eventHandler: { event in if case .decodingFailed = event { events.withLock { $0 += 1 } } })
        #expect(try new.value(forKey: "p") == nil)
        #expect(new.statistics.decodeFailures == 1)
        #expect(new.statistics.misses == 1)
        #expect(events.withLock { $0 } == 1)
        #expect(new.diskSize == 0)
    }

    @Test func entriesInAnotherFormatAreMissesAndReplaced() throws {
        let json = try ObjectCache<String, Note>(directory: directory.url, configuration: .init(format: .json))
        try json.set(sampleNote, forKey: "n")
        try json.close()
        let plist = try ObjectCache<String, Note>(
            directory: directory.url, configuration: .init(format: .propertyList(.binary)))
        #expect(try plist.value(forKey: "n") == nil)
        try plist.set(sampleNote, forKey: "n")
        plist.clearMemory()
        #expect(try plist.value(forKey: "n") == sampleNote)
    }

    @Test func garbageInTheEnvelopeSlotIsAMiss() throws {
        let cache = try ObjectCache<String, String>(directory: directory.url)
        try cache.set("v", forKey: "k")
        let engineKey = cache.keyHasher.engineKey(for: Data("s:k".utf8))
        try cache.close()
        let engine = try DiskLRUCache(
            directory: directory.url, appVersion: 1, valueCount: 2, maxSize: 1 << 20, options: .init(storage: .packed))
        try engine.setPartialData([0: Data("garbage".utf8)], forKey: engineKey)
        try engine.close()
        let reopened = try ObjectCache<String, String>(directory: directory.url)
        #expect(try reopened.value(forKey: "k") == nil)
    }

    @Test func schemaVersionBumpStartsEmpty() throws {
        let v1 = try ObjectCache<String, String>(directory: directory.url, configuration: .init(schemaVersion: 1))
        try v1.set("old", forKey: "k")
        try v1.close()
        let v2 = try ObjectCache<String, String>(directory: directory.url, configuration: .init(schemaVersion: 2))
        #expect(try v2.value(forKey: "k") == nil)
        #expect(v2.disk.recoveryReport.wasWiped)
    }

    @Test func encodingFailureThrowsWithTheKey() throws {
        struct Unencodable: Codable, Sendable {
            func encode(to encoder: any Encoder) throws {
                throw EncodingError.invalidValue(0, .init(codingPath: [], debugDescription: "no"))
            }
        }
        let cache = try ObjectCache<String, Unencodable>(directory: directory.url)
        do {
            try cache.set(Unencodable(), forKey: "bad")
            Issue.record("no error")
        } catch let error as ObjectCacheError {
            #expect(error.code == .encodingFailed)
            #expect(error.key == "bad")
        }
        #expect(try cache.value(forKey: "bad") == nil)
    }

    @Test func removePermanentlyAndRemoveAll() throws {
        let cache = try ObjectCache<String, String>(directory: directory.url)
        try cache.set("1", forKey: "a")
        cache.setUnsaved("2", forKey: "b")
        #expect(try cache.removeValue(forKey: "a"))
        #expect(try cache.value(forKey: "a") == nil)
        #expect(try !cache.removeValue(forKey: "zzz"))
        #expect(try !cache.removeValue(forKey: "a"))
        try cache.set("3", forKey: "c")
        try cache.removeAll()
        #expect(cache.memoryCount == 0)
        #expect(cache.diskSize == 0)
        #expect(cache.keys() == [])
    }

    @Test func concurrentReadersAndWritersFromManyTasks() async throws {
        let cache = try ObjectCache<Int, String>(directory: directory.url, configuration: .init(memoryLimit: 8))
        try await withThrowingTaskGroup(of: Void.self) { group in
            for worker in 0..<8 {
                group.addTask {
                    for step in 0..<60 {
                        let key = (worker * 7 + step) % 16
                        switch step % 4 {
                        case 0: try await cache.set("\(key)", forKey: key)
                        case 1: cache.setUnsaved("\(key)", forKey: key)
                        case 2:
                            if let value = try await cache.value(forKey: key) { #expect(value == "\(key)") }
                        default: try await cache.save()
                        }
                    }
                }
            }
            try await group.waitForAll()
        }
        try await cache.save()
        cache.clearMemory()
        for key in try await cache.keys() { #expect(try await cache.value(forKey: key) == "\(key)") }
    }
}
