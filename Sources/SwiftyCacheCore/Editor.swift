#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif

/// An edit of one entry, obtained from ``DiskLRUCache/edit(forKey:)-6ed5f`` or ``Snapshot/edit()``.
///
/// Each value is written to `key.i.tmp` as it is set, outside the cache's lock; ``commit()``
/// renames them into place and journals the entry in one step, so readers see all old or all
/// new values. An editor released without ``commit()`` or ``abort()`` aborts.
///
/// The editor is `Sendable`, but its methods are meant to be called in sequence. While a
/// ``write(at:_:)`` closure runs, calling ``setData(_:at:)``, ``write(at:_:)`` or ``commit()``
/// on the same editor (from the closure or another thread) throws
/// ``CacheError/Code/editorBusy``; ``abort()`` there takes effect when the closure returns.
public final class Editor: Sendable {
    /// The key of the entry being edited.
    public let key: String
    let id: UInt64
    let cache: DiskLRUCache
    private let progress: LockedState<Progress>

    private struct Progress {
        /// What each slot holds in this edit, `nil` where nothing was written.
        var staged: [StagedSlot?]
        var isDone = false
        /// Whether a `write(at:)` closure is running.
        var isWriting = false
        /// Set by `abort()` while a closure runs; the abort happens when it returns.
        var abortRequested = false
    }

    init(cache: DiskLRUCache, key: String, id: UInt64) {
        self.cache = cache
        self.key = key
        self.id = id
        self.progress = LockedState(Progress(staged: Array(repeating: nil, count: cache.valueCount)))
    }

    deinit {
        abort()
    }

    /// Sets slot `index` to `data`.
    ///
    /// - Throws: ``CacheError/Code/slotOutOfRange``, ``CacheError/Code/editorFinished``,
    ///   ``CacheError/Code/editorBusy``, or ``CacheError/Code/ioFailure`` (the slot is then
    ///   unwritten; the editor stays usable).
    public func setData(_ data: Data, at index: Int) throws {
        try write(at: index) { writer in try writer.write(data) }
    }

    /// Sets slot `index` to the UTF-8 bytes of `string`.
    ///
    /// - Throws: The errors of ``setData(_:at:)``.
    public func setString(_ string: String, at index: Int) throws {
        try setData(Data(string.utf8), at: index)
    }

    /// Streams a value into slot `index`: `body` writes it in as many pieces as it likes.
    ///
    /// ```swift
    /// try editor.write(at: 1) { writer in
    ///     for chunk in chunks { try writer.write(chunk) }
    /// }
    /// ```
    ///
    /// The editor's lock is not held while `body` runs; calling this editor from inside `body`
    /// throws ``CacheError/Code/editorBusy`` rather than deadlocking.
    ///
    /// - Throws: The errors of ``setData(_:at:)``, and whatever `body` throws (the slot is then
    ///   unwritten).
    public func write(at index: Int, _ body: (SlotWriter) throws -> Void) throws {
        try progress.withLock { (progress) throws(CacheError) in
            guard !progress.isDone else { throw CacheError.editorFinished(key: key, operation: .write) }
            guard !progress.isWriting else { throw CacheError.editorBusy(key: key, operation: .write) }
            guard progress.staged.indices.contains(index) else {
                throw CacheError.slotOutOfRange(index, valueCount: cache.valueCount, key: key, operation: .write)
            }
            progress.isWriting = true
            // Staging truncates the slot's file first: until it succeeds the slot is unwritten.
            progress.staged[index] = nil
        }
        var staged: StagedSlot?
        var failure: (any Error)?
        do {
            staged = try cache.stage(key: key, slot: index, operation: .write) { storage in
                try storage.stage(key: key, slot: index) { sink in
                    let writer = SlotWriter(sink: sink, key: key)
                    defer { writer.isOpen = false }
                    try body(writer)
                }
            }
        } catch {
            failure = error
        }
        let abandoned: [StagedSlot?]? = progress.withLock { progress in
            progress.isWriting = false
            progress.staged[index] = staged
            guard progress.abortRequested else { return nil }
            progress.isDone = true
            return progress.staged
        }
        if let abandoned { cache.abandonEdit(key: key, editorID: id, staged: abandoned) }
        if let failure { throw failure }
    }

    /// The committed value of slot `index` before this edit; `nil` for a new entry.
    ///
    /// - Throws: ``CacheError/Code/slotOutOfRange``, ``CacheError/Code/editorFinished``, and
    ///   the read errors of ``Snapshot/readData(at:)``.
    public func data(at index: Int) throws -> Data? {
        guard (0..<cache.valueCount).contains(index) else {
            throw CacheError.slotOutOfRange(index, valueCount: cache.valueCount, key: key, operation: .read)
        }
        guard !progress.withLock({ $0.isDone }) else { throw CacheError.editorFinished(key: key, operation: .read) }
        guard let snapshot = try cache.openSnapshot(key: key, recordingRead: false, operation: .read) else {
            return nil
        }
        defer { snapshot.close() }
        return try snapshot.readData(at: index)
    }

    /// Publishes the values set in this edit.
    ///
    /// - Throws: ``CacheError/Code/incompleteEntry`` when a new entry (or one removed while
    ///   this editor was open) lacks a slot: the edit is aborted and no entry is left;
    ///   ``CacheError/Code/editorFinished`` after a commit or abort,
    ///   ``CacheError/Code/editorBusy`` inside a ``write(at:_:)`` closure,
    ///   ``CacheError/Code/cacheClosed``, ``CacheError/Code/journalUnavailable``, or
    ///   ``CacheError/Code/ioFailure``. After an I/O failure the entry holds its previous
    ///   values, or, if the failure struck after some slots were published, is removed: it
    ///   never holds a mix.
    public func commit() throws {
        let staged = try progress.withLock { (progress) throws(CacheError) -> [StagedSlot?] in
            guard !progress.isDone else { throw CacheError.editorFinished(key: key, operation: .commit) }
            guard !progress.isWriting else { throw CacheError.editorBusy(key: key, operation: .commit) }
            progress.isDone = true
            return progress.staged
        }
        try cache.commitEdit(key: key, editorID: id, staged: staged, operation: .commit)
    }

    /// Discards the values set in this edit; the entry keeps its previous values. Calling it
    /// after ``commit()`` or a previous abort does nothing. Called inside a ``write(at:_:)``
    /// closure, the edit is aborted when the closure returns.
    public func abort() {
        let abandoned: [StagedSlot?]? = progress.withLock { progress in
            guard !progress.isDone else { return nil }
            guard !progress.isWriting else {
                progress.abortRequested = true
                return nil
            }
            progress.isDone = true
            return progress.staged
        }
        if let abandoned { cache.abandonEdit(key: key, editorID: id, staged: abandoned) }
    }
}
