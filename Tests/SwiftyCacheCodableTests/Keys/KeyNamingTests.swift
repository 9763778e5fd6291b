import Foundation
import SwiftyCacheCodable
import SwiftyCacheCore
import SwiftyCacheTestSupport
import Testing

/// The directory records how its entries are named, so that the default naming can change
/// without orphaning what an earlier release wrote (SHA-256 names, no record).
@Suite struct KeyNamingTests {
    let directory = TemporaryDirectory()

    var record: String? {
        let url = directory.url.appending(path: "objectcache-keys")
        return (try? Data(contentsOf: url)).map { String(decoding: $0, as: UTF8.self) }
    }

    @Test func aNewCacheNamesKeysByXXHashAndRecordsIt() throws {
        let cache = try ObjectCache<String, String>(directory: directory.url)
        #expect(record == "xxhash128\n")
        try cache.set("v", forKey: "k")
        #expect(try cache.disk.containsValue(forKey: XXHashKeyHasher().engineKey(for: Data("s:k".utf8))))
        try cache.close()
        let reopened = try ObjectCache<String, String>(directory: directory.url)
        #expect(try reopened.value(forKey: "k") == "v")
    }

    @Test func aDirectoryAnEarlierReleaseWroteKeepsSHA256Names() throws {
        // What an earlier release wrote: SHA-256 names and no record.
        let old = try ObjectCache<String, String>(
            directory: directory.url, configuration: .init(keyHasher: SHA256KeyHasher()))
        for i in 0..<20 { try old.set("value \(i)", forKey: "key \(i)") }
        try old.close()
        #expect(record == nil)

        let cache = try ObjectCache<String, String>(directory: directory.url)
        #expect(record == "sha256\n")
        for i in 0..<20 { #expect(try cache.value(forKey: "key \(i)") == "value \(i)") }
        try cache.set("new", forKey: "added")
        #expect(try cache.disk.containsValue(forKey: SHA256.hexDigest(Data("s:added".utf8))))
        try cache.close()
        // Emptied, it stays SHA-256: the record, not the entries, decides from now on.
        let again = try ObjectCache<String, String>(directory: directory.url)
        try again.removeAll()
        try again.close()
        let emptied = try ObjectCache<String, String>(directory: directory.url)
        try emptied.set("x", forKey: "y")
        #expect(try emptied.disk.containsValue(forKey: SHA256.hexDigest(Data("s:y".utf8))))
    }

    @Test func aRecordThisReleaseDoesNotKnowIsRefusedAndNothingIsTouched() throws {
        let cache = try ObjectCache<String, String>(directory: directory.url)
        try cache.set("v", forKey: "k")
        try cache.close()
        try Data("blake3\n".utf8).write(to: directory.url.appending(path: "objectcache-keys"))
        let error = #expect(throws: ObjectCacheError.self) {
            try ObjectCache<String, String>(directory: directory.url)
        }
        #expect(error?.code == .invalidConfiguration)
        #expect(error?.message.contains("blake3") == true)
        try Data("xxhash128\n".utf8).write(to: directory.url.appending(path: "objectcache-keys"))
        #expect(try ObjectCache<String, String>(directory: directory.url).value(forKey: "k") == "v")
    }

    @Test func aReadOnlyCacheWritesNoRecord() throws {
        let old = try ObjectCache<String, String>(
            directory: directory.url, configuration: .init(keyHasher: SHA256KeyHasher()))
        try old.set("v", forKey: "k")
        try old.close()
        let reader = try ObjectCache<String, String>(directory: directory.url, configuration: .init(isReadOnly: true))
        #expect(try reader.value(forKey: "k") == "v")
        #expect(record == nil)
    }

    @Test func anExplicitHasherIsUsedAsGiven() throws {
        let cache = try ObjectCache<String, String>(
            directory: directory.url, configuration: .init(keyHasher: SHA256KeyHasher()))
        try cache.set("v", forKey: "k")
        #expect(try cache.disk.containsValue(forKey: SHA256.hexDigest(Data("s:k".utf8))))
        #expect(record == nil)
    }

    @Test func theRecordCannotBeWrittenIsAnErrorWithItsPath() throws {
        // A directory where the record's temporary name is taken by a directory: the write fails.
        try FileManager.default.createDirectory(
            at: directory.url.appending(path: "objectcache-keys.tmp"), withIntermediateDirectories: true)
        let error = #expect(throws: ObjectCacheError.self) {
            try ObjectCache<String, String>(directory: directory.url)
        }
        #expect(error?.code == .diskFailure)
        #expect(error?.message.contains("objectcache-keys") == true)
    }
}
