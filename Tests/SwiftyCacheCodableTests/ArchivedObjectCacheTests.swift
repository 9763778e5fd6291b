import Foundation
import SwiftyCacheCodable
import SwiftyCacheCore
import SwiftyCacheSecureCoding
import SwiftyCacheTestSupport
import Testing

/// A model class of the Objective-C era.
final class LegacyNote: NSObject, NSSecureCoding {
    static var supportsSecureCoding: Bool { true }
    let title: String
    let tags: [String]
    let attachment: LegacyAttachment?

    init(title: String, tags: [String], attachment: LegacyAttachment? = nil) {
        self.title = title
        self.tags = tags
        self.attachment = attachment
    }

    required init?(coder: NSCoder) {
        guard let title = coder.decodeObject(of: NSString.self, forKey: "title"),
            let tags = coder.decodeObject(of: [NSArray.self, NSString.self], forKey: "tags") as? [String]
        else { return nil }
        self.title = title as String
        self.tags = tags
        self.attachment = coder.decodeObject(of: LegacyAttachment.self, forKey: "attachment")
    }

    func encode(with coder: NSCoder) {
        coder.encode(title as NSString, forKey: "title")
        coder.encode(tags as NSArray, forKey: "tags")
        coder.encode(attachment, forKey: "attachment")
    }

    override func isEqual(_ object: Any?) -> Bool {
        guard let other = object as? LegacyNote else { return false }
        return title == other.title && tags == other.tags && attachment == other.attachment
    }
}

final class LegacyAttachment: NSObject, NSSecureCoding {
    static var supportsSecureCoding: Bool { true }
    let bytes: Data

    init(bytes: Data) { self.bytes = bytes }

    required init?(coder: NSCoder) {
        guard let bytes = coder.decodeObject(of: NSData.self, forKey: "bytes") else { return nil }
        self.bytes = bytes as Data
    }

    func encode(with coder: NSCoder) { coder.encode(bytes as NSData, forKey: "bytes") }

    override func isEqual(_ object: Any?) -> Bool { (object as? LegacyAttachment)?.bytes == bytes }
}

/// A class that says it does not support secure coding.
final class InsecureNote: NSObject, NSSecureCoding {
    static var supportsSecureCoding: Bool { false }
    override init() {}
    required init?(coder: NSCoder) { nil }
    func encode(with coder: NSCoder) { coder.encode(1, forKey: "one") }
}

@Suite struct ArchivedObjectCacheTests {
    let directory = TemporaryDirectory()
    let note = LegacyNote(
        title: "Hello", tags: ["a", "b"], attachment: LegacyAttachment(bytes: Data(repeating: 7, count: 300)))

    @Test(arguments: [DiskLRUCache.Storage.packed, .files])
    func objectsRoundTripThroughDiskAndReopen(storage: DiskLRUCache.Storage) throws {
        let configuration = ObjectCacheConfiguration(memoryLimit: 0, storage: storage)
        do {
            let cache = try ArchivedObjectCache<String, LegacyNote>(
                directory: directory.url, allowedClasses: [LegacyAttachment.self], configuration: configuration)
            try cache.set(note, forKey: "n")
            #expect(try cache.value(forKey: "n") == note)
            #expect(try cache.containsValue(forKey: "n"))
            try cache.close()
        }
        let cache = try ArchivedObjectCache<String, LegacyNote>(
            directory: directory.url, allowedClasses: [LegacyAttachment.self], configuration: configuration)
        #expect(cache.count == 1)
        #expect(try cache.value(forKey: "n") == note)
        #expect(try cache.removeValue(forKey: "n"))
        #expect(try cache.value(forKey: "n") == nil)
    }

    @Test func aClassOutsideTheAllowListIsACountedMiss() throws {
        do {
            let cache = try ArchivedObjectCache<String, LegacyNote>(
                directory: directory.url, allowedClasses: [LegacyAttachment.self])
            try cache.set(note, forKey: "n")
            try cache.set(LegacyNote(title: "plain", tags: []), forKey: "plain")
            try cache.close()
        }
        let cache = try ArchivedObjectCache<String, LegacyNote>(directory: directory.url)
        #expect(try cache.value(forKey: "n") == nil)
        #expect(cache.statistics.decodeFailures == 1)
        #expect(try !cache.containsValue(forKey: "n"))
        #expect(try cache.value(forKey: "plain")?.title == "plain")
    }

    @Test func damagedOrForeignArchivesAreCountedMisses() throws {
        let cache = try ArchivedObjectCache<String, LegacyNote>(
            directory: directory.url, allowedClasses: [LegacyAttachment.self])
        try cache.set(note, forKey: "n")
        let payload = try #require(try cache.archives.value(forKey: "n"))
        var flipped = payload
        flipped[payload.count - 20] ^= 0x01
        let attachmentOnly = try ArchivedObjectCache<String, LegacyAttachment>(directory: directory.appending("other"))
        try attachmentOnly.set(LegacyAttachment(bytes: Data([1, 2])), forKey: "a")
        let otherRoot = try #require(try attachmentOnly.archives.value(forKey: "a"))
        let damaged = [flipped, payload.prefix(30), Data("garbage".utf8), Data(), otherRoot]
        for (index, bytes) in damaged.enumerated() {
            try cache.archives.set(bytes, forKey: "d\(index)")
            #expect(try cache.value(forKey: "d\(index)") == nil)
            #expect(try !cache.containsValue(forKey: "d\(index)"))
        }
        #expect(cache.statistics.decodeFailures == damaged.count)
        #expect(try cache.value(forKey: "n") == note)
    }

    @Test func anObjectThatDoesNotSupportSecureCodingIsRefused() throws {
        let cache = try ArchivedObjectCache<String, InsecureNote>(directory: directory.url)
        let error = try #require(throws: ObjectCacheError.self) { try cache.set(InsecureNote(), forKey: "x") }
        #expect(error.code == .encodingFailed)
        #expect(cache.count == 0)
    }

    @Test func aStoreOpensArchivedNamespaces() throws {
        let store = CacheStore(directory: directory.url)
        let notes = try store.archivedObjects("legacy", of: LegacyNote.self, allowedClasses: [LegacyAttachment.self])
        try notes.set(note, forKey: "n")
        #expect(store.namespaces() == ["legacy"])
        let again = try store.archivedObjects("legacy", of: LegacyNote.self, allowedClasses: [LegacyAttachment.self])
        #expect(try again.value(forKey: "n") == note)
    }
}
