import SwiftyCacheCore

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Fetch-through: a read that fetches what is missing or too old, once per key however many
/// callers ask.
extension ObjectCache {
    /// What ``value(forKey:maxAge:options:fetch:)`` may return instead of waiting for a fetch.
    public struct FetchOptions: OptionSet, Sendable, Hashable {
        public let rawValue: Int

        public init(rawValue: Int) { self.rawValue = rawValue }

        /// A value older than `maxAge` is returned at once, and fetched again in the background
        /// (HTTP's `stale-while-revalidate`).
        public static var staleWhileRevalidate: FetchOptions { FetchOptions(rawValue: 1 << 0) }

        /// A value older than `maxAge` is returned when the fetch fails (HTTP's
        /// `stale-if-error`): what an app offline shows.
        public static var staleIfError: FetchOptions { FetchOptions(rawValue: 1 << 1) }
    }

    /// The value for `key` if the cache holds one younger than `maxAge`; otherwise the value
    /// `fetch` returns, which is stored before it is returned.
    ///
    /// ```swift
    /// let page = try await pages.value(forKey: url, maxAge: .seconds(600)) { url in
    ///     try await download(url)
    /// }
    /// ```
    ///
    /// However many callers ask for the same key at once, `fetch` runs once, and they all get
    /// its value or its error (the first caller's `fetch` is the one that runs). A cancelled
    /// caller returns at once with `CancellationError`; the fetch goes on for the callers still
    /// waiting, and is cancelled when the last of them is. A value's age is counted from when
    /// it was written (its entry's creation date), by the configuration's clock. A failed fetch
    /// stores nothing.
    ///
    /// - Parameters:
    ///   - key: The key.
    ///   - maxAge: How old a value may be and still be returned without a fetch.
    ///   - options: Whether an older value may be returned instead of waiting
    ///     (``FetchOptions/staleWhileRevalidate``) or instead of an error
    ///     (``FetchOptions/staleIfError``). The default is neither.
    ///   - fetch: Produces the current value of a key, typically from the network.
    /// - Throws: `fetch`'s error; `CancellationError`; ``ObjectCacheError`` for a key that cannot
    ///   be encoded or a disk failure while looking the key up.
    /// - Complexity: a fresh value in memory costs a memory hit and a clock read. The call runs
    ///   on the caller's executor (`nonisolated(nonsending)`, with Swift 6.2 and later): a hit
    ///   from the main actor returns without leaving it (a hop to the global executor and back
    ///   cost such a hit 20 µs, forty memory hits); only a miss leaves for the disk and the fetch.
    #if compiler(>=6.2)
    @inlinable
    nonisolated(nonsending) public func value(
        forKey key: Key, maxAge: Duration, options: FetchOptions = [],
        fetch: @escaping @Sendable (Key) async throws -> Value
    ) async throws -> Value {
        if let value = memory.youngHit(key, maxAge: maxAge, clock: clock) { return value }
        return try await valueAfterYoungMiss(forKey: key, maxAge: maxAge, options: options, fetch: fetch)
    }
    #else
    @inlinable
    public func value(
        forKey key: Key, maxAge: Duration, options: FetchOptions = [],
        fetch: @escaping @Sendable (Key) async throws -> Value
    ) async throws -> Value {
        if let value = memory.youngHit(key, maxAge: maxAge, clock: clock) { return value }
        return try await valueAfterYoungMiss(forKey: key, maxAge: maxAge, options: options, fetch: fetch)
    }
    #endif

    /// The rest of a fetch-through read, when memory held no value younger than `maxAge`: an
    /// older value in memory or on disk, then the fetch.
    @usableFromInline
    func valueAfterYoungMiss(
        forKey key: Key, maxAge: Duration, options: FetchOptions,
        fetch: @escaping @Sendable (Key) async throws -> Value
    ) async throws -> Value {
        try Task.checkCancellation()
        var created = Date.distantPast
        var stored = memory.freshDatedHit(key, now: clock(), created: &created).map { (value: $0, created: created) }
        if stored == nil { stored = try await DiskLRUCache.offload { try self.datedValue(forKey: key) } }
        let now = clock()
        guard let (value, created) = stored else { return try await fetched(key, maxAge: maxAge, fetch: fetch) }
        if maxAge.exceeds(age: now.timeIntervalSince(created)) { return value }
        if options.contains(.staleWhileRevalidate) {
            flights.start(key) { try await self.fetchAndStore(key, maxAge: maxAge, fetch: fetch) }
            return value
        }
        do {
            return try await fetched(key, maxAge: maxAge, fetch: fetch)
        } catch  where options.contains(.staleIfError) && !(error is CancellationError) {
            return value
        }
    }

    /// The value of the one fetch of `key` in flight, started if there is none.
    func fetched(_ key: Key, maxAge: Duration, fetch: @escaping @Sendable (Key) async throws -> Value) async throws
        -> Value
    {
        try await flights.value(for: key) { try await self.fetchAndStore(key, maxAge: maxAge, fetch: fetch) }
    }

    /// Runs `fetch` and stores its value, unless a value younger than `maxAge` is stored by
    /// now: a caller that missed just as the previous fetch of the key finished (and removed
    /// itself) finds that fetch's value instead of fetching again, in memory, or on disk when
    /// the memory tier keeps nothing. A value that cannot be stored is still returned, and the
    /// failure reported to the event handler: the fetch itself succeeded.
    package func fetchAndStore(
        _ key: Key, maxAge: Duration, fetch: @escaping @Sendable (Key) async throws -> Value
    ) async throws -> Value {
        let now = clock()
        var created = Date.distantPast
        if let value = memory.inspect(for: key, { $0.findDated(key, now: now, created: &created) }),
            maxAge.exceeds(age: now.timeIntervalSince(created))
        {
            return value
        }
        if memory.keepsNothing,
            let (value, created) = try? await DiskLRUCache.offload({
                try self.load(key, now: now).map { ($0.value, $0.created) }
            }),
            maxAge.exceeds(age: now.timeIntervalSince(created))
        {
            return value
        }
        let value = try await fetch(key)
        guard !isReadOnly else { return value }
        do {
            try await set(value, forKey: key)
        } catch {
            eventHandler?(.saveFailed(key: key, error: error))
        }
        return value
    }

    /// The value of `key` with its creation date, after a memory miss: from disk (then kept in
    /// memory); `nil` on a miss. Counted as a read.
    func datedValue(forKey key: Key) throws -> (value: Value, created: Date)? {
        let now = clock()
        guard try valueAfterMemoryMiss(forKey: key) != nil else { return nil }
        // Read from disk just now, so in memory unless the tier keeps nothing: then its
        // date comes from the disk.
        var created = Date.distantPast
        if let value = memory.inspect(for: key, { $0.findDated(key, now: now, created: &created) }) {
            return (value, created)
        }
        guard let loaded = try load(key, now: now) else { return nil }
        return (loaded.value, loaded.created)
    }
}
