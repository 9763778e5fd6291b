/// Whether the system may delete a namespace's files to free space: the choice between a
/// cache and data kept until the app deletes it.
///
/// ```swift
/// let store = try CacheStore(name: "MyApp")                     // purgeable by default
/// var drafts = ObjectCacheConfiguration()
/// drafts.storageClass = .durable                               // Application Support
/// let saved = try store.objects("drafts", of: Draft.self, configuration: drafts)
/// ```
///
/// A namespace records its class when it is created; opening it with the other class throws
/// ``ObjectCacheError/Code/storageClassConflict`` (see <doc:ChoosingStorage>).
public enum CacheStorageClass: String, Sendable, Hashable, Codable, CaseIterable, CustomStringConvertible {
    /// The platform's caches directory, which the system may empty when storage runs low:
    /// `$XDG_CACHE_HOME` or `~/.cache` on Linux, the user's Caches folder on Apple platforms
    /// (never backed up).
    case purgeable
    /// The platform's directory for an app's own data, which only the app deletes:
    /// `$XDG_DATA_HOME` or `~/.local/share` on Linux, Application Support on Apple platforms
    /// (excluded from backups unless the configuration says otherwise).
    case durable

    /// `"purgeable"` or `"durable"`.
    public var description: String { rawValue }
}
