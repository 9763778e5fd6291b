import Foundation
import SwiftyCacheCodable
import SwiftyCacheCore
import SwiftyCacheTestSupport
import Testing

/// The public surface exactly as the issues spell it (no `try` where they write none), so that
/// code written from them compiles and works.
@Suite struct ContractTests {
    let directory = TemporaryDirectory()

    @Test func engineSurfaceAsSpecified() throws {
        let v0 = Data("v0".utf8)
        let v1 = Data("v1".utf8)
        let v1b = Data("v1b".utf8)
        let cache = try DiskLRUCache(
            directory: directory.appending("engine"), appVersion: 1, valueCount: 2, maxSize: 2 << 20)
        try cache.setData([v0, v1], forKey: "hello")
        try cache.setPartialData([1: v1b], forKey: "hello")
        if let snap = try cache.snapshot(forKey: "hello") {
            #expect(try snap.readData(at: 0) == v0)
            #expect(try snap.readString(at: 1, encoding: .utf8) == "v1b")
            #expect(snap.length(at: 0) == 2)
        } else {
            Issue.record("missing entry")
        }
        if let editor = try cache.edit(forKey: "hello") { try editor.commit() }
        #expect(try cache.removeValue(forKey: "hello"))
        #expect(cache.size == 0 && cache.maxSize == 2 << 20 && cache.count == 0)
        try cache.setMaxSize(1 << 20)
        try cache.flush()
        try cache.evictAll()
        try cache.close()
        try cache.delete()
    }

    @Test func objectCacheSurfaceAsSpecified() throws {
        struct Page: Codable, Sendable, Equatable {
            var url: URL
            var title: String
            var html: String
        }
        let url = try #require(URL(string: "https://example.com/a"))
        let url2 = try #require(URL(string: "https://example.com/b"))
        let page = Page(url: url, title: "A", html: "<p>a</p>")
        let pages = try ObjectCache<URL, Page>(
            directory: directory.appending("objects"),
            configuration: .init(maxDiskSize: 50 << 20, memoryLimit: 200, format: .json))
        try pages.set(page, forKey: url)
        let p = try pages.value(forKey: url)
        #expect(p == page)
        pages.setUnsaved(page, forKey: url2)
        try pages.save()
        try pages.save(forKey: url)
        pages.clearMemory()
        pages.clearMemory(forKey: url)
        #expect(Set(pages.keys()) == [url, url2])
        try pages.set(page, forKey: url, expiresAfter: .seconds(3600))
        try pages.removeValue(forKey: url)
        try pages.removeAll()
        #expect(pages.keys() == [])
    }

    @Test func preloadAsSpecified() async throws {
        let pages = try ObjectCache<Int, String>(directory: directory.appending("preload"))
        try await pages.set("one", forKey: 1)
        pages.clearMemory()
        await pages.preload([1, 2])
        #expect(pages.memoryCount == 1)
    }
}
