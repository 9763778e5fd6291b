/// The engine's errors, one factory per kind of failure, so that each message is written once
/// and every error carries the key, path, operation and cause it has.
extension CacheError {
    /// A failed system call (or a lower error) during `operation` on `path`. A ``CacheError``
    /// passed as `cause` is returned as it is.
    static func ioFailure(
        _ cause: any Error, operation: Operation, path: String, key: String? = nil, file: String = #fileID,
        line: Int = #line
    ) -> CacheError {
        if let error = cause as? CacheError { return error }
        let message =
            (cause as? SystemCallFailure).map(SystemCallError.init).map { "\($0.call) failed: \($0.errnoText)" }
            ?? "\(cause)"
        return CacheError(
            at: file, line, code: .ioFailure, message: message, key: key, path: path, operation: operation, cause: cause
        )
    }

    static func invalidKey(_ key: String, operation: Operation, file: String = #fileID, line: Int = #line) -> CacheError
    {
        CacheError(
            at: file, line,
            code: .invalidKey, message: "keys must match [a-z0-9_-]{1,120}, got \(String(reflecting: key))",
            key: key, operation: operation)
    }

    static func invalidConfiguration(
        _ message: String, path: String? = nil, operation: Operation, cause: (any Error)? = nil, file: String = #fileID,
        line: Int = #line
    ) -> CacheError {
        CacheError(
            at: file, line, code: .invalidConfiguration, message: message, path: path, operation: operation,
            cause: cause)
    }

    static func directoryLocked(_ path: String, cause: (any Error)? = nil, file: String = #fileID, line: Int = #line)
        -> CacheError
    {
        CacheError(
            at: file, line,
            code: .directoryLocked,
            message: "another DiskLRUCache, in this process or another, has this directory open; close it first",
            path: path, operation: .open, cause: cause)
    }

    /// Where several caches write (``DiskLRUCache/Sharing/processes``): another cache's
    /// operation held the directory's operation lock for as long as an operation waits.
    static func sharedOperationTimedOut(
        _ path: String, waited: Duration, cause: (any Error)? = nil, file: String = #fileID, line: Int = #line
    ) -> CacheError {
        CacheError(
            at: file, line,
            code: .directoryLocked,
            message: "another cache sharing this directory held its lock for \(waited) (a process stopped inside an "
                + "operation, as in a debugger, holds it until it goes on or ends); nothing was changed",
            path: path, operation: .open, cause: cause)
    }

    /// Where several caches write: the ones that have the directory open follow another
    /// version of the sharing protocol (another release).
    static func sharedProtocolMismatch(_ path: String, file: String = #fileID, line: Int = #line) -> CacheError {
        CacheError(
            at: file, line,
            code: .directoryLocked,
            message: "caches of another release share this directory, and their protocol is not this one's; "
                + "open it once they have closed it",
            path: path, operation: .open)
    }

    static func closed(operation: Operation, key: String? = nil, file: String = #fileID, line: Int = #line)
        -> CacheError
    {
        CacheError(at: file, line, code: .cacheClosed, message: "the cache is closed", key: key, operation: operation)
    }

    static func closedWhileEditing(key: String, file: String = #fileID, line: Int = #line) -> CacheError {
        CacheError(
            at: file, line,
            code: .cacheClosed, message: "the cache was closed while this editor was open; the edit was aborted",
            key: key, operation: .commit)
    }

    static func slotOutOfRange(
        _ index: Int, valueCount: Int, key: String, operation: Operation, file: String = #fileID, line: Int = #line
    ) -> CacheError {
        CacheError(
            at: file, line,
            code: .slotOutOfRange, message: "slot \(index) is outside 0..<\(valueCount)", key: key, operation: operation
        )
    }

    static func wrongValueCount(
        expected: Int, got: Int, key: String, operation: Operation, file: String = #fileID, line: Int = #line
    ) -> CacheError {
        CacheError(
            at: file, line,
            code: .wrongValueCount, message: "expected \(expected) values, got \(got)", key: key, operation: operation)
    }

    static func editInProgress(key: String, operation: Operation, file: String = #fileID, line: Int = #line)
        -> CacheError
    {
        CacheError(
            at: file, line,
            code: .editInProgress, message: "another editor holds this key; commit or abort it first",
            key: key, operation: operation)
    }

    /// The journal cannot take lines since `failure`, and rebuilding it failed too.
    static func journalUnavailable(
        _ failure: CacheError, operation: Operation, key: String?, file: String = #fileID, line: Int = #line
    ) -> CacheError {
        CacheError(
            at: file, line,
            code: .journalUnavailable,
            message:
                "an earlier journal write failed and the journal could not be rebuilt yet; edits are refused until it is, reads still work",
            key: key, path: failure.path, operation: operation, cause: failure)
    }

    static func entryNotFound(
        key: String, operation: Operation, message: String, cause: (any Error)? = nil, file: String = #fileID,
        line: Int = #line
    ) -> CacheError {
        CacheError(at: file, line, code: .entryNotFound, message: message, key: key, operation: operation, cause: cause)
    }

    static func incompleteEntry(key: String, missingSlot: Int, file: String = #fileID, line: Int = #line) -> CacheError
    {
        CacheError(
            at: file, line,
            code: .incompleteEntry,
            message:
                "a new entry needs a value in every slot; slot \(missingSlot) was never written, so the edit was aborted",
            key: key, operation: .commit)
    }

    static func editorDetached(key: String, file: String = #fileID, line: Int = #line) -> CacheError {
        CacheError(
            at: file, line,
            code: .editorDetached, message: "the entry was removed while this editor was open; nothing was written",
            key: key, operation: .commit)
    }

    static func editorFinished(key: String, operation: Operation, file: String = #fileID, line: Int = #line)
        -> CacheError
    {
        CacheError(
            at: file, line,
            code: .editorFinished, message: "this editor was already committed or aborted", key: key,
            operation: operation)
    }

    static func editorBusy(key: String, operation: Operation, file: String = #fileID, line: Int = #line) -> CacheError {
        CacheError(
            at: file, line,
            code: .editorBusy,
            message: "this editor is inside a write(at:) closure; call it again after the closure returns",
            key: key, operation: operation)
    }

    static func slotWriterClosed(key: String, file: String = #fileID, line: Int = #line) -> CacheError {
        CacheError(
            at: file, line,
            code: .editorFinished, message: "a SlotWriter cannot be used after its write closure returns",
            key: key, operation: .write)
    }

    static func corruptValue(
        key: String, path: String, found: Int, recorded: Int, file: String = #fileID, line: Int = #line
    ) -> CacheError {
        CacheError(
            at: file, line,
            code: .corruptValue, message: "the value holds \(found) bytes, the journal recorded \(recorded)",
            key: key, path: path, operation: .read)
    }

    static func snapshotClosed(key: String, operation: Operation, file: String = #fileID, line: Int = #line)
        -> CacheError
    {
        CacheError(
            at: file, line, code: .snapshotClosed, message: "the snapshot was closed", key: key, operation: operation)
    }

    static func notACacheDirectory(path: String, reason: String, file: String = #fileID, line: Int = #line)
        -> CacheError
    {
        CacheError(
            at: file, line,
            code: .notACacheDirectory,
            message:
                "this directory's journal is not a DiskLruCache journal (\(reason)); choose an empty directory or one this cache created",
            path: path, operation: .open)
    }

    static func storageMismatch(
        path: String, found: String, requested: String, file: String = #fileID, line: Int = #line
    ) -> CacheError {
        CacheError(
            at: file, line,
            code: .storageMismatch,
            message:
                "this directory holds a cache in \(found) storage, opened with \(requested) storage; open it with the storage it was written in, or use another directory",
            path: path, operation: .open)
    }

    /// A packed edit whose staged slot is not where its length says: a bug in the engine.
    static func packedInvariant(key: String, slot: Int, file: String = #fileID, line: Int = #line) -> CacheError {
        assertionFailure("packed storage: slot \(slot) of \(key) is not staged where its length puts it")
        return CacheError(
            at: file, line,
            code: .ioFailure,
            message: "slot \(slot) was not staged as packed storage expects; the edit was not published",
            key: key, operation: .commit)
    }

    static func foreignFile(key: String, path: String, file: String = #fileID, line: Int = #line) -> CacheError {
        CacheError(
            at: file, line,
            code: .foreignFile,
            message:
                "a file the cache did not create has this key's value file name; it is left alone and the key refused",
            key: key, path: path, operation: .edit)
    }

    static func pinLimitExceeded(
        key: String, pinnedBytes: Int, entryBytes: Int, limit: Int, file: String = #fileID, line: Int = #line
    ) -> CacheError {
        CacheError(
            at: file, line,
            code: .pinLimitExceeded,
            message:
                "pinning \(entryBytes) bytes would take the pinned entries from \(pinnedBytes) bytes past maxPinnedSize, \(limit) bytes; unpin some or raise the limit",
            key: key, operation: .pin)
    }

    static func readOnly(operation: Operation, key: String? = nil, file: String = #fileID, line: Int = #line)
        -> CacheError
    {
        CacheError(
            at: file, line,
            code: .readOnly, message: "the cache was opened read-only; nothing can be written", key: key,
            operation: operation)
    }

    /// The cache's directory is gone: something deleted it underneath the cache (an OS cache
    /// cleaner). The storage that finds out throws it; ``CacheState`` recreates the directory
    /// and the call goes on (``isDirectoryVanished``). Users see it only if that fails too, as
    /// an ``Code/ioFailure`` whose cause is the call that found `ENOENT`.
    static func directoryVanished(
        _ cause: SystemCallFailure, operation: Operation, path: String, key: String?, file: String = #fileID,
        line: Int = #line
    ) -> CacheError {
        var error = ioFailure(cause, operation: operation, path: path, key: key, file: file, line: line)
        error.message += "; the cache directory was deleted"
        error.isDirectoryVanished = true
        return error
    }
}
