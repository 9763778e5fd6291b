import Dispatch
import Synchronization

/// The cache's own files to delete: renamed out of the way under the lock and unlinked after it,
/// and files that could not be deleted, remembered for the next open's sweep.
extension CacheState {
    /// Renames `path` to a unique `….N.tmp` name and queues it for unlinking after the lock.
    /// The trash name can never be a key's file, so a key recreated meanwhile is safe, and a
    /// crash before the unlink leaves only a `.tmp` file, which opening sweeps away.
    mutating func moveToTrash(_ path: String) {
        // Only the backup journal goes to the trash: its name is ``CacheFileName/journalTrash(_:)``.
        trashCounter += 1
        let trash = directory.path(CacheFileName.journalTrash(UInt64(trashCounter)).name)
        do {
            try fileSystem.rename(path, to: trash)
            pendingDeletions.append(trash)
        } catch  where error.errno == Errno.noEntry {
            return
        } catch {
            deleteFile(path)
        }
    }

    /// Remembers that files of `key` could not be deleted: the next open sweeps them.
    mutating func noteUndeletedFiles(of key: String) {
        hasUndeletedFiles = true
        undeletedKeys.insert(key)
    }

    /// Deletes a file, best effort: a failure is remembered so the next open sweeps.
    mutating func deleteFile(_ path: String) {
        do {
            try fileSystem.removeFileIfPresent(path)
        } catch {
            hasUndeletedFiles = true
        }
    }

    /// The queued trash, emptied.
    mutating func takePendingDeletions() -> [String] {
        defer { pendingDeletions.removeAll() }
        return pendingDeletions
    }

    /// The queued trash, emptied, for the caller to unlink after the lock is released. When
    /// it returns files, the caller leaves ``trashBeingUnlinked`` once they are unlinked;
    /// `close()` waits until it has.
    mutating func takeTrashToUnlink() -> [String] {
        guard !pendingDeletions.isEmpty else { return [] }
        trashBeingUnlinked.enter()
        return takePendingDeletions()
    }
}

/// Whether an unlink of trash, made after the cache lock was released, failed: recorded without
/// the lock (which `close()` may hold while it waits for the unlinks to end).
final class TrashUnlinkFailures: Sendable {
    private let failed = Atomic<Bool>(false)

    func note() { failed.store(true, ordering: .releasing) }

    var any: Bool { failed.load(ordering: .acquiring) }
}
