import Foundation
import SwiftyCacheCodable

/// One cached notes page: what `fetch` and `sync` store and `show` prints.
struct Page: Codable, Sendable, Equatable {
    var url: URL
    var title: String
    var body: String
    var contentType: String
    /// What the server said identifies this version of the page, sent back on refetch.
    var validators: Validators
    /// When the page was last fetched or confirmed unchanged (304).
    var fetchedAt: Date

    var byteCount: Int { body.utf8.count }

    /// The version of this type the cache stores: 2 since the validators became one value.
    static let schemaVersion = 2

    /// How pages an earlier version of notes-offline cached are read: converted, not dropped.
    static let migrations: [SchemaMigration<Page>] = [.from(1, as: PageV1.self) { Page($0) }]

    init(url: URL, title: String, body: String, contentType: String, validators: Validators, fetchedAt: Date) {
        self.url = url
        self.title = title
        self.body = body
        self.contentType = contentType
        self.validators = validators
        self.fetchedAt = fetchedAt
    }

    /// A page as version 1 stored it.
    init(_ old: PageV1) {
        self.init(
            url: old.url, title: old.title, body: old.body, contentType: old.contentType,
            validators: Validators(etag: old.etag, lastModified: old.lastModified), fetchedAt: old.fetchedAt)
    }
}

/// A server's validators of a page, sent back as `If-None-Match` / `If-Modified-Since` when
/// the page is fetched again (for a file, its modification date plays `Last-Modified`).
struct Validators: Codable, Sendable, Equatable {
    var etag: String?
    var lastModified: String?
}

/// A page as notes-offline stored it before its validators became one value (schema version
/// 1): kept to read the caches it wrote.
struct PageV1: Codable, Sendable {
    var url: URL
    var title: String
    var body: String
    var contentType: String
    var etag: String?
    var lastModified: String?
    var fetchedAt: Date
}

/// Hit and miss counts of `show`, kept across runs in the cache's `meta` namespace.
struct UsageCounters: Codable, Sendable {
    var hits = 0
    var misses = 0
}
