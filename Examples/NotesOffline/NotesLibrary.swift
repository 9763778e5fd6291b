import Foundation
import SwiftyCacheCodable
import SwiftyCacheCore
import Synchronization

/// The offline notes library: a folder holding the `pages` namespace (`ObjectCache<URL, Page>`)
/// and `notes-offline.json`, the marker that says the folder is ours and keeps the settings.
///
/// Commands that only read (`show`, `list`, `stats`) open it read-only: they create, evict and
/// write nothing, and work while another `notes-offline` writes the same cache.
struct NotesLibrary: Sendable {
    /// What the marker file keeps.
    struct Settings: Codable, Sendable, Equatable {
        var formatVersion = 1
        /// The size limit of the pages; changed only by `notes-offline limit`.
        var maxSize = 50 << 20
        /// Whether the system may purge the pages; chosen when the library is created
        /// (`--durable`), `nil` in a library an earlier version made (purgeable).
        var storageClass: CacheStorageClass?
        /// Whether several commands may write at once (`sharing: .processes`): `true` in a
        /// library this version creates, whose pages are kept in records of up to 1 MiB; `nil` in
        /// one an earlier version made, whose records are smaller: one writer at a time there.
        var sharesWriters: Bool?
    }

    let root: URL
    let settings: Settings
    /// `nil` for a read-only library whose cache does not exist yet.
    let pages: ObjectCache<URL, Page>?

    static let markerName = "notes-offline.json"
    static let namespace = "pages"

    /// `~/.cache/notes-offline` on Linux (or `$XDG_CACHE_HOME`), the Caches folder on Apple platforms.
    static var defaultRoot: URL { defaultRoot(for: .purgeable) }

    /// The library's folder under the platform's directory for `storageClass`.
    static func defaultRoot(for storageClass: CacheStorageClass) -> URL {
        CacheStore.defaultRoot(for: storageClass).appending(path: "notes-offline", directoryHint: .isDirectory)
    }

    /// The folder used without `--cache-dir`: the durable one with `--durable`; otherwise the
    /// caches folder, unless only the durable folder holds a library (one kept with
    /// `--durable` is found without the flag).
    static func defaultRoot(durable: Bool) -> URL {
        let kept = defaultRoot(for: .durable)
        if durable { return kept }
        if case .library? = try? locate(defaultRoot) { return defaultRoot }
        if case .library? = try? locate(kept) { return kept }
        return defaultRoot
    }

    /// What is at `root`: nothing, an empty folder, or a notes-offline cache and its settings.
    enum Location {
        case missing, empty
        case library(Settings)
    }

    /// Checks that `root` is safe to use: missing, empty, or a notes-offline cache (its marker,
    /// or, from an earlier version, nothing but `pages` and `meta`). Anything else is refused,
    /// so that no command ever touches a folder of the user's.
    static func locate(_ root: URL) throws -> Location {
        let path = root.path(percentEncoded: false)
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else { return .missing }
        guard isDirectory.boolValue else {
            throw FetchError(description: "cannot open the cache at \(path): it is a file, not a folder")
        }
        let names: [String]
        do {
            names = try FileManager.default.contentsOfDirectory(atPath: path)
        } catch {
            throw FetchError(description: "cannot open the cache at \(path): the folder cannot be read")
        }
        if names.contains(markerName) {
            let marker = root.appending(path: markerName)
            guard let data = try? Data(contentsOf: marker),
                let settings = try? JSONDecoder().decode(Settings.self, from: data)
            else {
                throw FetchError(description: "cannot open the cache at \(path): \(markerName) is damaged")
            }
            return .library(settings)
        }
        if names.isEmpty { return .empty }
        if Set(names).isSubset(of: [namespace, "meta"]) { return .library(Settings()) }
        throw FetchError(
            description:
                "\(path) is not a notes-offline cache and not empty; choose an empty or new folder with --cache-dir")
    }

    /// Opens the library to write: creates the folder and the marker if needed.
    /// With `durable`, a new library is kept where the system never purges it; an existing
    /// one keeps the class it was created with (asking another is an error).
    static func openForWriting(root: URL?, durable: Bool) throws -> NotesLibrary {
        let root = root ?? defaultRoot(durable: durable)
        var settings = Settings()
        var isNew = true
        switch try locate(root) {
        case .library(let existing):
            settings = existing
            isNew = false
        case .missing, .empty: break
        }
        if isNew { settings.sharesWriters = true }
        let storageClass = settings.storageClass ?? (durable && isNew ? .durable : .purgeable)
        if durable && storageClass != .durable {
            throw FetchError(
                description:
                    "the library at \(root.path(percentEncoded: false)) is a purgeable cache; --durable keeps a new library (choose another --cache-dir)"
            )
        }
        do {
            try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
            let markerPath = root.appending(path: markerName).path(percentEncoded: false)
            if !FileManager.default.fileExists(atPath: markerPath) || settings.storageClass != storageClass || isNew {
                settings.storageClass = storageClass
                try write(settings, to: root)
            }
        } catch {
            throw FetchError(
                description:
                    "cannot open the cache at \(root.path(percentEncoded: false)): \(error.localizedDescription)")
        }
        let pages = try openPages(root: root, settings: settings, readOnly: false)
        return NotesLibrary(root: root, settings: settings, pages: pages)
    }

    /// Opens the library to read: nothing is created or written; a cache that does not exist
    /// yet reads as empty.
    static func openForReading(root: URL?, durable: Bool) throws -> NotesLibrary {
        let root = root ?? defaultRoot(durable: durable)
        guard case .library(let settings) = try locate(root),
            FileManager.default.fileExists(atPath: root.appending(path: namespace).path(percentEncoded: false))
        else {
            return NotesLibrary(root: root, settings: Settings(), pages: nil)
        }
        return NotesLibrary(
            root: root, settings: settings, pages: try openPages(root: root, settings: settings, readOnly: true))
    }

    private static func openPages(root: URL, settings: Settings, readOnly: Bool) throws -> ObjectCache<URL, Page> {
        let path = root.path(percentEncoded: false)
        let pages: ObjectCache<URL, Page>
        do {
            let store = CacheStore(
                directory: root, storageClass: settings.storageClass ?? .purgeable, readOnly: readOnly)
            var configuration = ObjectCacheConfiguration(
                maxDiskSize: settings.maxSize, memoryLimit: 64, schemaVersion: Page.schemaVersion)
            // A `fetch` while a `sync` runs, two `sync`s of different sites: every writer
            // takes the cache's lock for one write at a time. Readers read beside them anyway.
            if settings.sharesWriters == true && !readOnly { configuration.sharing = .processes }
            pages = try store.objects(
                namespace, of: Page.self, keyType: URL.self, configuration: configuration, migrations: Page.migrations)
        } catch let error as ObjectCacheError {
            // The store wraps the engine's error; its code says why the directory did not open.
            let cause = error.cause as? CacheError
            if cause?.code == .directoryLocked {
                throw FetchError(
                    description: "the cache at \(path) is in use by another notes-offline; wait for it to finish")
            }
            throw FetchError(description: "cannot open the cache at \(path): \(cause?.message ?? error.message)")
        }
        let report = pages.recoveryReport
        if let reason = report.wipeReason {
            FileHandle.standardError.write(
                Data(
                    "notes-offline: warning: the cache's journal was damaged (\(reason)); its pages were dropped\n".utf8
                ))
        } else if report.damagedJournalLines > 0 {
            // A damaged line costs the pages it names, never the others.
            let lines = report.damagedJournalLines == 1 ? "1 line" : "\(report.damagedJournalLines) lines"
            let dropped = report.droppedDamagedEntries == 1 ? "1 page" : "\(report.droppedDamagedEntries) pages"
            FileHandle.standardError.write(
                Data(
                    "notes-offline: warning: the cache's journal was damaged (\(lines) skipped); \(dropped) dropped\n"
                        .utf8))
        }
        return pages
    }

    /// Writes the marker atomically: a temporary file renamed over it.
    static func write(_ settings: Settings, to root: URL) throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        try encoder.encode(settings).write(to: root.appending(path: markerName), options: .atomic)
    }

    var cachedCount: Int { pages?.count ?? 0 }

    /// The pages pinned (`notes-offline pin`).
    func pinnedPageCount() async throws -> Int {
        guard let pages else { return 0 }
        return try await pages.keys().filter { try pages.isPinned($0) }.count
    }
    var usedBytes: Int { pages?.diskSize ?? 0 }

    func cachedPage(_ url: URL) throws -> Page? {
        try pages?.value(forKey: url)
    }

    /// What refreshing one URL did.
    enum Refresh {
        case new(Page)
        case updated(Page)
        case unchanged(Page)
        case skipped(reason: String)

        var page: Page? {
            switch self {
            case .new(let page), .updated(let page), .unchanged(let page): page
            case .skipped: nil
            }
        }
    }

    /// Fetches `url` (or confirms the cached copy with a conditional request) and caches it,
    /// through the cache's fetch-through: a copy fetched less than `maxAge` ago is kept as it
    /// is, and however many refreshes of one URL run at once, one request goes out.
    func refresh(_ url: URL, maxAge: Duration = .zero, with fetcher: Fetcher) async throws -> Refresh {
        guard let pages else { return .skipped(reason: "the cache is read-only") }
        let cached = try await pages.value(forKey: url)
        // What this call's own fetch did; a call that joined another's fetch (or found a fresh
        // copy) leaves it empty.
        let outcome = Outcome()
        let maxSize = settings.maxSize
        do {
            let page = try await pages.value(forKey: url, maxAge: maxAge) { url in
                switch try await fetcher.fetch(url, cached: cached, now: Date()) {
                case .fetched(let page):
                    // Larger than the whole cache: it would be evicted at once.
                    guard page.byteCount < maxSize else {
                        throw FetchError(
                            description:
                                "\(page.url.absoluteString): the page is \(formatBytes(page.byteCount)), larger than the cache limit of \(formatBytes(maxSize)); raise it with 'notes-offline limit'"
                        )
                    }
                    outcome.value.withLock { $0 = cached == nil ? .new(page) : .updated(page) }
                    return page
                case .notModified:
                    guard var page = cached else {
                        throw FetchError(description: "\(url.absoluteString): no cached copy")
                    }
                    page.fetchedAt = Date()
                    outcome.value.withLock { $0 = .unchanged(page) }
                    return page
                case .skipped(let reason):
                    throw SkippedPage(reason: reason)
                }
            }
            return outcome.value.withLock { $0 } ?? .unchanged(page)
        } catch let skipped as SkippedPage {
            return .skipped(reason: skipped.reason)
        } catch let error as FetchError {
            guard let cached else { throw error }
            throw FetchError(
                description:
                    "\(error.description) (the cached copy from \(cached.fetchedAt.formatted(.iso8601)) is kept)")
        }
    }

    /// What one refresh's own fetch did, set from inside the fetch.
    private final class Outcome: Sendable {
        let value = Mutex<Refresh?>(nil)
    }

    /// A page the fetch chose not to cache (not text, another host): not an error.
    private struct SkippedPage: Error {
        var reason: String
    }

    func close() {
        try? pages?.close()
    }
}
