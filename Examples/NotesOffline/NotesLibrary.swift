import Foundation
import SwiftyCacheCodable
import SwiftyCacheCore
import Synchronization

/// The offline notes library: the pages namespace and the usage counters, under one root.
///
/// Everything here goes through the public API of SwiftyCacheCodable: a `CacheStore` with two
/// namespaces, `pages` (`ObjectCache<URL, Page>`) and `meta` (`ObjectCache<String, UsageCounters>`).
struct NotesLibrary: Sendable {
    let root: URL
    let maxSize: Int
    let pages: ObjectCache<URL, Page>
    let meta: ObjectCache<String, UsageCounters>

    static let defaultMaxSize = 50 << 20

    /// `~/.cache/notes-offline` on Linux (or `$XDG_CACHE_HOME`), the Caches folder on Apple platforms.
    static var defaultRoot: URL {
        CacheStore.defaultRoot().appending(path: "notes-offline", directoryHint: .isDirectory)
    }

    /// The libraries this process opened, by root: a cache directory can be open only once,
    /// and `demo` runs several commands on the same one.
    private static let opened = Mutex<[String: NotesLibrary]>([:])

    /// Opens the library at `root` (the default root when `nil`), or returns the one this
    /// process already opened there.
    static func open(root: URL?, maxSize: Int?) throws -> NotesLibrary {
        let path = (root ?? defaultRoot).standardizedFileURL.path(percentEncoded: false)
        return try opened.withLock { opened in
            if let library = opened[path] { return library }
            let library = try NotesLibrary(root: root, maxSize: maxSize)
            opened[path] = library
            return library
        }
    }

    private init(root: URL?, maxSize: Int?) throws {
        self.root = root ?? Self.defaultRoot
        self.maxSize = maxSize ?? Self.defaultMaxSize
        let store = CacheStore(directory: self.root)
        do {
            pages = try store.objects(
                "pages", of: Page.self, keyType: URL.self, maxDiskSize: self.maxSize, memoryLimit: 64)
            meta = try store.objects("meta", of: UsageCounters.self, maxDiskSize: 1 << 20, memoryLimit: 4)
        } catch let error as ObjectCacheError {
            // The store wraps the engine's error; its code says why the directory did not open.
            let cause = error.cause as? CacheError
            if cause?.code == .directoryLocked {
                throw FetchError(
                    description:
                        "the cache at \(self.root.path(percentEncoded: false)) is in use by another notes-offline; wait for it to finish"
                )
            }
            throw FetchError(
                description:
                    "cannot open the cache at \(self.root.path(percentEncoded: false)): \(error.message)\(cause?.path.map { " (\($0))" } ?? "")"
            )
        }
    }

    func cachedPage(_ url: URL) throws -> Page? {
        try pages.value(forKey: url)
    }

    /// Stores a fetched page, refusing one larger than the whole cache (it would be evicted at once).
    func store(_ page: Page) async throws {
        // The envelope and the JSON around the body take a little more than the body itself.
        guard page.byteCount < maxSize else {
            throw FetchError(
                description:
                    "\(page.url.absoluteString): the page is \(formatBytes(page.byteCount)), larger than the cache limit of \(formatBytes(maxSize)); raise --max-size"
            )
        }
        try await pages.set(page, forKey: page.url)
    }

    /// Adds to the hit and miss counters kept across runs.
    func count(hit: Bool) {
        var counters = (try? meta.value(forKey: "usage")) ?? UsageCounters()
        if hit { counters.hits += 1 } else { counters.misses += 1 }
        try? meta.set(counters, forKey: "usage")
    }

    var counters: UsageCounters { (try? meta.value(forKey: "usage")) ?? UsageCounters() }

    /// Fetches `url` (or confirms the cached copy with a conditional request) and caches it.
    func refresh(_ url: URL, with fetcher: Fetcher) async throws -> (page: Page, wasModified: Bool) {
        let cached = try await pages.value(forKey: url)
        do {
            switch try await fetcher.fetch(url, cached: cached, now: Date()) {
            case .fetched(let page):
                try await store(page)
                return (page, true)
            case .notModified:
                guard var page = cached else { throw FetchError(description: "\(url.absoluteString): no cached copy") }
                page.fetchedAt = Date()
                try await pages.set(page, forKey: url)
                return (page, false)
            }
        } catch let error as FetchError {
            guard let cached else { throw error }
            throw FetchError(
                description:
                    "\(error.description) (the cached copy from \(cached.fetchedAt.formatted(.iso8601)) is kept)")
        }
    }
}

/// Parses and checks a URL argument: http, https or file.
func parseURL(_ text: String) throws -> URL {
    if text.hasPrefix("/") { return URL(filePath: text) }
    guard let url = URL(string: text), let scheme = url.scheme?.lowercased(),
        ["http", "https", "file"].contains(scheme), scheme == "file" || url.host?.isEmpty == false
    else {
        throw FetchError(description: "invalid URL '\(text)': use an http, https or file URL")
    }
    return url
}
