#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif
import Synchronization

/// An edit of one entry, obtained from ``DiskLRUCache/edit(_:)`` or ``Snapshot/edit()``.
///
/// Each value is written to `key.i.tmp` as it is set, outside the cache's lock; ``commit()``
/// renames them into place and journals the entry in one step, so readers see all old or all
/// new values. An editor released without ``commit()`` or ``abort()`` aborts.
///
/// The editor is `Sendable`, but its methods are meant to be called in sequence: each one
/// waits for the one before it to finish.
public final class Editor: Sendable {
    /// The key of the entry being edited.
    public let key: String
    let id: UInt64
    let cache: DiskLRUCache
    private let progress: LockedState<Progress>

    private struct Progress {
        /// The byte length written to each slot in this edit, `nil` where none was.
        var written: [Int?]
        var isDone = false
    }

    init(cache: DiskLRUCache, key: String, id: UInt64) {
        self.cache = cache
        self.key = key
        self.id = id
        self.progress = LockedState(Progress(written: Array(repeating: nil, count: cache.valueCount)))
    }

    deinit {
        abort()
    }

    /// Sets slot `index` to `data`.
    ///
    /// - Throws: ``CacheError/Code/slotOutOfRange``, ``CacheError/Code/editorFinished``, or
    ///   ``CacheError/Code/ioFailure`` (the slot is then unwritten; the editor stays usable).
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
    /// - Throws: The errors of ``setData(_:at:)``, and whatever `body` throws (the slot is then
    ///   unwritten).
    public func write(at index: Int, _ body: (SlotWriter) throws -> Void) throws {
        try progress.withLock { progress in
            guard !progress.isDone else { throw finished(operation: "write") }
            guard progress.written.indices.contains(index) else {
                throw CacheError.slotOutOfRange(index, valueCount: cache.valueCount, key: key, operation: "write")
            }
            progress.written[index] = nil
            progress.written[index] = try cache.writeValueFile(key: key, slot: index) { fd in
                let writer = SlotWriter(fd: fd, environment: cache.environment, key: key, slot: index)
                defer { writer.isOpen = false }
                try body(writer)
                return writer.count
            }
        }
    }

    /// The committed value of slot `index` before this edit; `nil` for a new entry.
    ///
    /// - Throws: ``CacheError/Code/slotOutOfRange``, ``CacheError/Code/editorFinished``, and
    ///   the read errors of ``Snapshot/data(at:)``.
    public func data(at index: Int) throws -> Data? {
        guard (0..<cache.valueCount).contains(index) else {
            throw CacheError.slotOutOfRange(index, valueCount: cache.valueCount, key: key, operation: "read")
        }
        guard !progress.withLock({ $0.isDone }) else { throw finished(operation: "read") }
        let snapshot = try cache.locked(operation: "read", key: key) { state in
            try cache.openSnapshot(key: key, recordingRead: false, in: &state)
        }
        guard let snapshot else { return nil }
        defer { snapshot.close() }
        return try snapshot.readData(at: index)
    }

    /// Publishes the values set in this edit.
    ///
    /// - Throws: ``CacheError/Code/incompleteEntry`` when a new entry (or one removed while
    ///   this editor was open) lacks a slot: the edit is aborted and no entry is left;
    ///   ``CacheError/Code/editorFinished`` after a commit or abort,
    ///   ``CacheError/Code/cacheClosed``, ``CacheError/Code/journalUnavailable``, or
    ///   ``CacheError/Code/ioFailure``. After an I/O failure the entry holds its previous
    ///   values, or, if the failure struck after some slots were published, is removed: it
    ///   never holds a mix.
    public func commit() throws {
        try progress.withLock { progress in
            guard !progress.isDone else { throw finished(operation: "commit") }
            progress.isDone = true
            try cache.completeEdit(key: key, editorID: id, written: progress.written)
        }
    }

    /// Discards the values set in this edit; the entry keeps its previous values. Calling it
    /// after ``commit()`` or a previous abort does nothing.
    public func abort() {
        progress.withLock { progress in
            guard !progress.isDone else { return }
            progress.isDone = true
            cache.abandonEdit(key: key, editorID: id, written: progress.written)
        }
    }

    private func finished(operation: String) -> CacheError {
        CacheError(
            code: .editorFinished, message: "this editor was already committed or aborted",
            key: key, operation: operation)
    }
}

/// Receives the bytes of one slot inside ``Editor/write(at:_:)``.
public final class SlotWriter {
    private let fd: Int32
    private let environment: CacheEnvironment
    private let key: String
    private let slot: Int
    var isOpen = true
    /// The number of bytes written so far.
    public private(set) var count = 0

    init(fd: Int32, environment: CacheEnvironment, key: String, slot: Int) {
        self.fd = fd
        self.environment = environment
        self.key = key
        self.slot = slot
    }

    private var path: String { environment.dirtyPath(key, slot) }

    /// Appends `data` to the slot.
    ///
    /// - Throws: ``CacheError/Code/ioFailure``.
    public func write(_ data: Data) throws {
        try data.withUnsafeBytes { try write(bytes: $0) }
    }

    /// Appends raw bytes to the slot.
    ///
    /// - Throws: ``CacheError/Code/ioFailure``.
    public func write(bytes: UnsafeRawBufferPointer) throws {
        guard isOpen else {
            throw CacheError(
                code: .editorFinished, message: "a SlotWriter cannot be used after its write closure returns",
                key: key, path: path, operation: "write")
        }
        do {
            try environment.writeAll(fd, bytes)
        } catch {
            throw CacheError.io(error, operation: "write", path: path, key: key)
        }
        count += bytes.count
    }
}
