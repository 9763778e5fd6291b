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

/// `ObjectCache` keeps its entries in packed storage unless told otherwise, and converts the
/// directories earlier releases wrote in file storage.
@Suite struct ObjectCacheStorageTests {
    let directory = TemporaryDirectory()
    let note = Note(title: "groceries", tags: ["home"], created: Date(timeIntervalSince1970: 1_000), body: "milk, eggs")

    @Test func anEntryIsOneRecordInASegment() throws {
        let cache = try ObjectCache<String, Note>(directory: directory.url)
        try cache.set(note, forKey: "n")
        #expect(try JournalFixture.allLines(in: directory.url).first == "swiftycache.packed")
        #expect(
            try JournalFixture.fileNames(in: directory.url) == [
                "journal", "journal.lock", "journal.reserve", "objectcache-keys", "segment-00000001.pack",
            ])
        // Envelope and payload: one CLEAN line naming one record, no DIRTY line before it.
        let lines = try JournalFixture.rawBodyLines(in: directory.url)
        #expect(lines.count == 1)
        #expect(lines.first?.hasPrefix("CLEAN ") == true)
        cache.clearMemory()
        #expect(try cache.value(forKey: "n") == note)
    }

    @Test func aDirectoryAnEarlierReleaseWroteInFileStorageIsConvertedKeepingItsEntries() throws {
        let old = try ObjectCache<String, Note>(directory: directory.url, configuration: .init(storage: .files))
        try old.set(note, forKey: "n")
        try old.set(Note(title: "other", tags: [], created: Date(timeIntervalSince1970: 5), body: ""), forKey: "m")
        try old.close()
        #expect(try JournalFixture.allLines(in: directory.url).first == JournalFixture.magic)
        let reader = try ObjectCache<String, Note>(directory: directory.url, configuration: .init(isReadOnly: true))
        #expect(!reader.recoveryReport.migratedFromFileStorage)
        #expect(try reader.value(forKey: "n") == note)
        try reader.close()

        let cache = try ObjectCache<String, Note>(directory: directory.url)
        #expect(cache.recoveryReport.migratedFromFileStorage)
        #expect(!cache.recoveryReport.wasWiped)
        #expect(try cache.value(forKey: "n") == note)
        try cache.set(note, forKey: "m")
        try cache.close()
        #expect(try JournalFixture.allLines(in: directory.url).first == JournalFixture.packedMagic)
        let reopened = try ObjectCache<String, Note>(directory: directory.url)
        #expect(!reopened.recoveryReport.migratedFromFileStorage)
        #expect(try reopened.value(forKey: "m") == note)
        #expect(try reopened.value(forKey: "n") == note)
    }

    @Test func askingForFileStorageOnAPackedDirectoryIsAnError() throws {
        try ObjectCache<String, Note>(directory: directory.url).set(note, forKey: "n")
        do {
            _ = try ObjectCache<String, Note>(directory: directory.url, configuration: .init(storage: .files))
            Issue.record("opened a packed directory as file storage")
        } catch let error as ObjectCacheError {
            #expect((error.cause as? CacheError)?.code == .storageMismatch)
        }
    }

    @Test func aStoreSizesAndClearsItsClosedPackedNamespaces() throws {
        do {
            let store = CacheStore(directory: directory.url)
            let notes = try store.objects("notes", of: Note.self)
            try notes.set(note, forKey: "n")
            #expect(store.totalSize() == notes.diskSize)
            try notes.close()
        }
        let reopened = CacheStore(directory: directory.url)
        let size = reopened.totalSize()
        #expect(size > 20 && size < 400)
        try reopened.clearAll()
        #expect(!FileManager.default.fileExists(atPath: directory.appending("notes").path(percentEncoded: false)))
    }

    @Test func maxDiskSizeBoundsThePackedDirectoryUnderChurn() throws {
        let limit = 1 << 20
        let cache = try ObjectCache<String, Note>(
            directory: directory.url, configuration: .init(maxDiskSize: limit, memoryLimit: 0))
        defer { try? cache.close() }
        var generator = SplitMix(state: 9)
        let body = String(repeating: "n", count: 300)
        var peak = 0
        for step in 0..<12_000 {
            let key = Int(generator.next() % 25_000)
            let note = Note(title: "t\(key)", tags: [], created: Date(timeIntervalSince1970: 1), body: body)
            try cache.set(note, forKey: "note-\(key)")
            if step >= 3_000 && step % 200 == 0 {
                cache.disk.waitForBackgroundWork()
                peak = max(peak, allocatedBytes(in: directory.url))
            }
        }
        #expect(Double(peak) <= 1.25 * Double(limit), "the directory took \(peak) bytes")
        #expect(cache.diskSize >= limit / 3)  // and the notes a fair share of it
    }

    /// The bytes the files in `directory` take on the device (`st_blocks`).
    private func allocatedBytes(in directory: URL) -> Int {
        let path = directory.path(percentEncoded: false)
        var total = 0
        for name in (try? FileManager.default.contentsOfDirectory(atPath: path)) ?? [] {
            var status = stat()
            if lstat(path + "/" + name, &status) == 0 { total += Int(status.st_blocks) * 512 }
        }
        return total
    }
}
