import Foundation
import SwiftyCacheCodable
import SwiftyCacheTestSupport
import Testing

@Suite struct CacheStoreTests {
    let directory = TemporaryDirectory()

    @Test func namespacesShareARootInSeparateFolders() throws {
        let store = CacheStore(directory: directory.url)
        let pages = try store.objects("pages", of: Note.self, keyType: URL.self)
        let images = try store.data("images", maxDiskSize: 1 << 20)
        let url = try #require(URL(string: "https://example.com/a"))
        try pages.set(sampleNote, forKey: url)
        try images.set(Data(repeating: 7, count: 1000), forKey: "logo")
        #expect(store.namespaces() == ["images", "pages"])
        #expect(
            FileManager.default.fileExists(atPath: directory.appending("pages/journal").path(percentEncoded: false)))
        #expect(store.totalSize() == pages.diskSize + images.diskSize)
        #expect(images.diskSize > 1000)
        #expect(try store.objects("pages", of: Note.self, keyType: URL.self) === pages)
        #expect(throws: ObjectCacheError.self) { try store.objects("pages", of: String.self) }
        try store.clearAll()
        #expect(store.totalSize() == 0)
        #expect(try pages.value(forKey: url) == nil)
    }

    @Test func totalSizeCountsNamespacesNotOpenedYet() throws {
        do {
            let first = CacheStore(directory: directory.url)
            try first.objects("a", of: String.self).set(String(repeating: "x", count: 500), forKey: "k")
        }
        let store = CacheStore(directory: directory.url)
        #expect(store.totalSize() > 500)
        try store.clearAll()
        #expect(store.namespaces() == [])
    }

    @Test(arguments: ["", "..", "../up", "a/b", ".hidden", "white space"])
    func namespaceNamesMustBePlainFolderNames(name: String) throws {
        let store = CacheStore(directory: directory.url)
        #expect(throws: ObjectCacheError.self) { try store.objects(name, of: String.self) }
    }

    @Test func defaultRootFollowsXDGOrHome() throws {
        let environment = ProcessInfo.processInfo.environment
        let expected: String
        if let xdg = environment["XDG_CACHE_HOME"], xdg.hasPrefix("/") {
            expected = xdg
        } else {
            expected = (environment["HOME"] ?? "") + "/.cache"
        }
        #expect(CacheStore.defaultRoot().standardizedFileURL.path(percentEncoded: false).hasPrefix(expected))
        let store = try CacheStore(name: "MyApp")
        #expect(store.directory.lastPathComponent == "MyApp")
    }
}
