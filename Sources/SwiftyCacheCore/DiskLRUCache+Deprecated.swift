#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif

// The spellings of the release before 1.0, kept for one release so that code written against it
// still builds, with a warning that names the new spelling. The CHANGELOG lists each.

extension DiskLRUCache {
    /// Removes the entry for `key`.
    @available(*, deprecated, renamed: "removeValue(forKey:)")
    @discardableResult
    public func remove(_ key: String) throws -> Bool { try removeValue(forKey: key) }

    /// Removes the entry for `key`.
    @available(*, deprecated, renamed: "removeValue(forKey:)")
    @discardableResult
    public func remove(_ key: String) async throws -> Bool { try await removeValue(forKey: key) }

    /// Whether a committed entry exists for `key`.
    @available(*, deprecated, renamed: "containsValue(forKey:)")
    public func contains(_ key: String) throws -> Bool { try containsValue(forKey: key) }

    /// Starts editing the entry for `key`.
    @available(*, deprecated, renamed: "edit(forKey:)")
    public func edit(_ key: String) throws -> Editor? { try edit(forKey: key) }

    /// The most threads that run the `async` overloads' file I/O at once, for every cache of the
    /// process. The default is the number of cores.
    @available(*, deprecated, message: "process-wide mutable state; the I/O pool keeps one thread per core")
    public static var asyncIOThreadLimit: Int {
        get { IOThreadPool.shared.limit }
        set { IOThreadPool.shared.limit = newValue }
    }
}

extension DiskLRUCache.Options {
    /// Whether the cache only reads.
    @available(*, deprecated, renamed: "isReadOnly")
    public var readOnly: Bool {
        get { isReadOnly }
        set { isReadOnly = newValue }
    }

    /// Options by their earlier labels. A `nil` storage is file storage for a `DiskLRUCache`,
    /// and packed storage (converting a file-storage directory) for the deprecated
    /// `ObjectCache` initializer that takes `diskOptions`.
    @available(*, deprecated, renamed: "init(syncsWrites:isReadOnly:storage:)")
    public init(syncsWrites: Bool = false, readOnly: Bool, storage: DiskLRUCache.Storage? = nil) {
        self.init(syncsWrites: syncsWrites, isReadOnly: readOnly)
        chosenStorage = storage
    }
}

extension RecoveryReport {
    /// Whether the open loaded the index saved at the last clean close.
    @available(*, deprecated, renamed: "loadedSavedIndex")
    public var loadedIndexSnapshot: Bool {
        get { loadedSavedIndex }
        set { loadedSavedIndex = newValue }
    }
}

extension Snapshot {
    /// All of slot `index`; `nil` if it cannot be read.
    @available(*, deprecated, renamed: "readData(at:)", message: "readData(at:) throws the reason")
    public func data(at index: Int) -> Data? { try? readData(at: index) }

    /// Slot `index` as a string; `nil` if it cannot be read or is not valid in `encoding`.
    @available(
        *, deprecated, renamed: "readString(at:encoding:)", message: "readString(at:encoding:) throws the reason"
    )
    public func string(at index: Int, encoding: String.Encoding = .utf8) -> String? {
        (try? readString(at: index, encoding: encoding)) ?? nil
    }
}

/// Steps inside the public calls, public until 1.0. Errors now name the call that failed
/// (``CacheError/Operation/compact`` for a journal rebuild `compact()` ran, for example).
extension CacheError.Operation {
    /// Evicting least recently used entries.
    @available(*, deprecated, message: "errors name the public call that failed, never a step inside it")
    public static var evict: Self { evicting }
    /// The background pass.
    @available(*, deprecated, message: "errors name the public call that failed, never a step inside it")
    public static var cleanup: Self { cleaningUp }
    /// Rewriting the journal from the index.
    @available(*, deprecated, message: "errors name the public call that failed, never a step inside it")
    public static var rebuildJournal: Self { rebuildingJournal }
    /// Dropping an entry whose values are missing or damaged.
    @available(*, deprecated, message: "errors name the public call that failed, never a step inside it")
    public static var dropDamagedEntry: Self { droppingDamagedEntry }
    /// Creating the cache directory.
    @available(*, deprecated, message: "errors name the public call that failed, never a step inside it")
    public static var createDirectory: Self { creatingDirectory }
    /// Taking the directory's advisory lock.
    @available(*, deprecated, message: "errors name the public call that failed, never a step inside it")
    public static var lockDirectory: Self { lockingDirectory }
    /// Recreating a directory deleted underneath the cache.
    @available(*, deprecated, message: "errors name the public call that failed, never a step inside it")
    public static var restoreDirectory: Self { restoringDirectory }
    /// Ending a session when the last reference to the cache goes.
    @available(*, deprecated, message: "errors name the public call that failed, never a step inside it")
    public static var deinitialize: Self { endingSession }
}
