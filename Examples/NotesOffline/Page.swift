import Foundation

/// One cached notes page: what `fetch` and `sync` store and `show` prints.
struct Page: Codable, Sendable, Equatable {
    var url: URL
    var title: String
    var body: String
    var contentType: String
    /// The server's validators, sent back as `If-None-Match` / `If-Modified-Since` on refetch.
    var etag: String?
    var lastModified: String?
    /// When the page was last fetched or confirmed unchanged (304).
    var fetchedAt: Date

    var byteCount: Int { body.utf8.count }
}

/// Hit and miss counts of `show`, kept across runs in the cache's `meta` namespace.
struct UsageCounters: Codable, Sendable {
    var hits = 0
    var misses = 0
}
