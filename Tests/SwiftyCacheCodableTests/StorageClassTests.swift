import Foundation
import SwiftyCacheCore
import SwiftyCacheTestSupport
import Testing

@testable import SwiftyCacheCodable

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

@Suite struct StorageClassTests {
    let directory = TemporaryDirectory()

    /// A store named `App` whose roots are this test's folders.
    func store(_ storageClass: CacheStorageClass = .purgeable) throws -> CacheStore {
        try CacheStore(name: "App", storageClass: storageClass, readOnly: false) { storageClass in
            directory.appending(storageClass == .durable ? "data" : "cache")
        }
    }

    func recordedClass(in folder: URL) throws -> String {
        try String(contentsOf: folder.appending(path: "objectcache-class"), encoding: .utf8)
    }

    #if !canImport(Darwin)
    @Test func theRootsFollowTheXDGBaseDirectories() {
        let environment = ["XDG_CACHE_HOME": "/x/cache", "XDG_DATA_HOME": "/x/data", "HOME": "/home/u"]
        #expect(StorageRoots.root(for: .purgeable, environment: environment).path(percentEncoded: false) == "/x/cache/")
        #expect(StorageRoots.root(for: .durable, environment: environment).path(percentEncoded: false) == "/x/data/")
        // A relative value is ignored, as the specification says; HOME's folders then.
        let relative = ["XDG_CACHE_HOME": "cache", "XDG_DATA_HOME": "data", "HOME": "/home/u"]
        #expect(
            StorageRoots.root(for: .purgeable, environment: relative).path(percentEncoded: false) == "/home/u/.cache/")
        #expect(
            StorageRoots.root(for: .durable, environment: relative).path(percentEncoded: false)
                == "/home/u/.local/share/")
        #expect(CacheStore.defaultRoot() == CacheStore.defaultRoot(for: .purgeable))
        #expect(CacheStore.defaultRoot(for: .durable) == StorageRoots.root(for: .durable))
    }
    #endif

    @Test func eachClassLivesUnderItsOwnRoot() throws {
        let store = try store()
        let notes = try store.objects("notes", of: Note.self)
        var durable = ObjectCacheConfiguration()
        durable.storageClass = .durable
        let drafts = try store.objects("drafts", of: Note.self, configuration: durable)
        try notes.set(sampleNote, forKey: "n")
        try drafts.set(sampleNote, forKey: "d")
        let cacheFolder = directory.appending("cache/App/notes")
        let dataFolder = directory.appending("data/App/drafts")
        #expect(store.directory.path == directory.appending("cache/App").path)
        #expect(store.directory(for: .durable).path == directory.appending("data/App").path)
        #expect(try recordedClass(in: cacheFolder) == "purgeable\n")
        #expect(try recordedClass(in: dataFolder) == "durable\n")
        #expect(store.namespaces() == ["drafts", "notes"])
        #expect(store.totalSize() == notes.diskSize + drafts.diskSize)
        try store.clearAll()
        #expect(notes.count == 0 && drafts.count == 0)

        // A store whose own class is durable puts unnamed namespaces there.
        let durableStore = try self.store(.durable)
        let kept = try durableStore.objects("kept", of: Note.self)
        try kept.set(sampleNote, forKey: "k")
        #expect(try recordedClass(in: directory.appending("data/App/kept")) == "durable\n")
    }

    @Test func aNamespaceOpensOnlyWithTheClassItWasCreatedWith() throws {
        var durable = ObjectCacheConfiguration()
        durable.storageClass = .durable
        do {
            let drafts = try store().objects("drafts", of: Note.self, configuration: durable)
            try drafts.set(sampleNote, forKey: "d")
            try drafts.close()
        }
        // Through a store: the namespace is found under the other root; no second copy is made.
        let error = try #require(throws: ObjectCacheError.self) { try store().objects("drafts", of: Note.self) }
        #expect(error.code == .storageClassConflict)
        #expect(!FileManager.default.fileExists(atPath: directory.appending("cache/App/drafts").path))

        // At a directory: the record decides.
        let folder = directory.appending("data/App/drafts")
        var purgeable = ObjectCacheConfiguration()
        purgeable.storageClass = .purgeable
        let direct = try #require(throws: ObjectCacheError.self) {
            try ObjectCache<String, Note>(directory: folder, configuration: purgeable)
        }
        #expect(direct.code == .storageClassConflict)
        // Nothing was lost: the durable open and an open that declares nothing both read it.
        let reopened = try ObjectCache<String, Note>(directory: folder, configuration: durable)
        #expect(try reopened.value(forKey: "d") == sampleNote)
        try reopened.close()
        let undeclared = try ObjectCache<String, Note>(directory: folder)
        #expect(try undeclared.value(forKey: "d") == sampleNote)
    }

    @Test func aDirectoryWithoutARecordTakesTheFirstDeclaredClass() throws {
        let folder = directory.appending("old")
        do {
            let cache = try ObjectCache<String, Note>(directory: folder)
            try cache.set(sampleNote, forKey: "a")
            try cache.close()
        }
        #expect(!FileManager.default.fileExists(atPath: folder.appending(path: "objectcache-class").path))
        var durable = ObjectCacheConfiguration()
        durable.storageClass = .durable
        do {
            let cache = try ObjectCache<String, Note>(directory: folder, configuration: durable)
            #expect(try cache.value(forKey: "a") == sampleNote)
            try cache.close()
        }
        #expect(try recordedClass(in: folder) == "durable\n")
    }

    @Test func aDamagedRecordIsAnErrorNeverAGuess() throws {
        let folder = directory.appending("damaged")
        do {
            let cache = try ObjectCache<String, Note>(
                directory: folder, configuration: ObjectCacheConfiguration(storageClass: .durable))
            try cache.set(sampleNote, forKey: "a")
            try cache.close()
        }
        let record = folder.appending(path: "objectcache-class")
        try Data("archive\n".utf8).write(to: record)
        let error = try #require(throws: ObjectCacheError.self) {
            try ObjectCache<String, Note>(
                directory: folder, configuration: ObjectCacheConfiguration(storageClass: .durable))
        }
        #expect(error.code == .invalidConfiguration)
        #expect(try Data(contentsOf: record) == Data("archive\n".utf8))
    }

    @Test func filesAreTheOwnersAloneWithOrWithoutAProtectionClass() throws {
        for protection: FileProtectionType? in [nil, .complete] {
            let folder = directory.appending("modes-\(protection == nil ? "default" : "protected")")
            let cache = try ObjectCache<String, Note>(
                directory: folder,
                configuration: ObjectCacheConfiguration(
                    storage: .files, storageClass: .durable, fileProtection: protection, warmStartCount: 10))
            try cache.set(sampleNote, forKey: "a")
            try cache.pin("a")
            try cache.close()
            let path = folder.path(percentEncoded: false)
            let mode = { (path: String) in
                (try FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? Int) ?? -1
            }
            #expect(try mode(path) == 0o700)
            let names = try FileManager.default.contentsOfDirectory(atPath: path)
            #expect(names.contains("objectcache-class") && names.contains("objectcache-warm"))
            for name in names {
                #expect(try mode(path + "/" + name) == 0o600, "\(name)")
            }
        }
    }

    @Test func aRefusedProtectedFileIsUnavailableAndNothingIsLost() throws {
        let folder = directory.appending("protected")
        var configuration = ObjectCacheConfiguration(
            memoryLimit: 0, storage: .files, storageClass: .durable, fileProtection: .complete)
        do {
            let cache = try ObjectCache<String, Note>(directory: folder, configuration: configuration)
            for index in 0..<5 { try cache.set(sampleNote, forKey: "n\(index)") }
            try cache.close()
        }
        let fileSystem = FaultInjectingFileSystem()
        // The device locked before the open: the open is refused, as unavailable.
        fileSystem.failCalls(named: ["open"], errno: EPERM)
        let refused = try #require(throws: ObjectCacheError.self) {
            try ObjectCache<String, Note>(directory: folder, configuration: configuration, fileSystem: fileSystem)
        }
        #expect(refused.code == .unavailable)
        fileSystem.heal()
        let cache = try ObjectCache<String, Note>(
            directory: folder, configuration: configuration, fileSystem: fileSystem)
        // Locked after the open: reads and writes are unavailable, the entries stay.
        fileSystem.failCalls(named: ["open"], errno: EPERM)
        let read = try #require(throws: ObjectCacheError.self) { try cache.value(forKey: "n1") }
        #expect(read.code == .unavailable)
        #expect(read.cause != nil)
        fileSystem.heal()
        #expect(cache.count == 5)
        for index in 0..<5 { #expect(try cache.value(forKey: "n\(index)") == sampleNote) }
        try cache.close()

        // Without a protection class, the same refusal is a disk failure like any other.
        configuration.fileProtection = nil
        let plain = try ObjectCache<String, Note>(
            directory: folder, configuration: configuration, fileSystem: fileSystem)
        fileSystem.failCalls(named: ["open"], errno: EPERM)
        let failure = try #require(throws: ObjectCacheError.self) { try plain.value(forKey: "n1") }
        #expect(failure.code == .diskFailure)
        fileSystem.heal()
        #expect(try plain.value(forKey: "n1") == sampleNote)
    }
}

extension StorageClassTests {
    /// Every file an open reads, refused as a locked device refuses a protected file: the open
    /// is unavailable or goes on, and once the files can be read again every value and pin is
    /// there. A refusal is never taken for damage.
    @Test(arguments: [DiskLRUCache.Storage.packed, .files])
    func aRefusalAtOpenIsNeverTakenForDamage(storage: DiskLRUCache.Storage) throws {
        let folder = directory.appending("refused-\(storage)")
        let configuration = ObjectCacheConfiguration(
            memoryLimit: 0, storage: storage, storageClass: .durable, fileProtection: .complete)
        do {
            let cache = try ObjectCache<String, Note>(directory: folder, configuration: configuration)
            for index in 0..<8 { try cache.set(sampleNote, forKey: "n\(index)") }
            try cache.pin("n3")
            try cache.close()
        }
        let names = try FileManager.default.contentsOfDirectory(atPath: folder.path(percentEncoded: false))
        for name in names.sorted() where name != "journal.lock" {
            let fileSystem = FaultInjectingFileSystem()
            fileSystem.failCalls(named: ["open"], errno: EPERM, pathContaining: name)
            do {
                let cache = try ObjectCache<String, Note>(
                    directory: folder, configuration: configuration, fileSystem: fileSystem)
                // The open did not need the file: reads may be refused, nothing is lost.
                for index in 0..<8 { _ = try? cache.value(forKey: "n\(index)") }
                try? cache.close()
            } catch let error as ObjectCacheError {
                #expect(error.code == .unavailable, "\(name): \(error)")
            }
            let reopened = try ObjectCache<String, Note>(directory: folder, configuration: configuration)
            #expect(reopened.count == 8, "\(name)")
            for index in 0..<8 { #expect(try reopened.value(forKey: "n\(index)") == sampleNote, "\(name)") }
            #expect(try reopened.isPinned("n3"), "\(name)")
            try reopened.close()
        }
    }
}

extension StorageClassTests {
    @Test func aNamespaceMovesToTheOtherClassWhole() throws {
        do {
            let notes = try store().objects("notes", of: Note.self)
            for index in 0..<10 { try notes.set(sampleNote, forKey: "n\(index)") }
            try notes.pin("n1")
            try notes.close()
        }
        let cacheFolder = directory.appending("cache/App/notes")
        let dataFolder = directory.appending("data/App/notes")
        try store().moveNamespace("notes", to: .durable)
        #expect(!FileManager.default.fileExists(atPath: cacheFolder.path))
        #expect(try recordedClass(in: dataFolder) == "durable\n")
        let moved = try store(.durable).objects("notes", of: Note.self)
        #expect(moved.count == 10)
        #expect(try moved.value(forKey: "n9") == sampleNote)
        #expect(try moved.isPinned("n1"))
        // Opened with its old class, it is a conflict, never an empty copy.
        let error = try #require(throws: ObjectCacheError.self) { try store().objects("notes", of: Note.self) }
        #expect(error.code == .storageClassConflict)
        try moved.close()
        // Moving again, or moving what does not exist, changes nothing.
        try store().moveNamespace("notes", to: .durable)
        try store().moveNamespace("missing", to: .durable)
        #expect(try recordedClass(in: dataFolder) == "durable\n")
        #expect(!FileManager.default.fileExists(atPath: directory.appending("data/App/missing").path))
    }

    @Test func aMoveFinishesAfterACrashAndRefusesWhatItMustNot() throws {
        do {
            let notes = try store().objects("notes", of: Note.self)
            try notes.set(sampleNote, forKey: "n")
            try notes.close()
        }
        // A crash after the rename, before the record: the folder is at the new root, its
        // record still says purgeable. The move, run again, finishes.
        try FileManager.default.createDirectory(at: directory.appending("data/App"), withIntermediateDirectories: true)
        try FileManager.default.moveItem(
            at: directory.appending("cache/App/notes"), to: directory.appending("data/App/notes"))
        try store().moveNamespace("notes", to: .durable)
        let durable = ObjectCacheConfiguration(storageClass: .durable)
        do {
            let notes = try store().objects("notes", of: Note.self, configuration: durable)
            #expect(try notes.value(forKey: "n") == sampleNote)
            // Open in another store: the cache's lock refuses the move.
            let locked = try #require(throws: ObjectCacheError.self) {
                try self.store().moveNamespace("notes", to: .purgeable)
            }
            #expect(locked.code == .diskFailure)
            #expect((locked.cause as? CacheError)?.code == .directoryLocked)
            try notes.close()
        }
        do {
            // Opened by this store: refused before anything is tried.
            let store = try store()
            let notes = try store.objects("notes", of: Note.self, configuration: durable)
            let open = try #require(throws: ObjectCacheError.self) { try store.moveNamespace("notes", to: .purgeable) }
            #expect(open.code == .invalidConfiguration)
            try notes.close()
        }
        #expect(try recordedClass(in: directory.appending("data/App/notes")) == "durable\n")
        // Both roots holding the name: a conflict, nothing moved.
        let stray = try ObjectCache<String, Note>(directory: directory.appending("cache/App/notes"))
        try stray.set(sampleNote, forKey: "s")
        try stray.close()
        let both = try #require(throws: ObjectCacheError.self) { try store().moveNamespace("notes", to: .durable) }
        #expect(both.code == .storageClassConflict)
        #expect(FileManager.default.fileExists(atPath: directory.appending("cache/App/notes/journal").path))
        #expect(FileManager.default.fileExists(atPath: directory.appending("data/App/notes/journal").path))
    }
}
