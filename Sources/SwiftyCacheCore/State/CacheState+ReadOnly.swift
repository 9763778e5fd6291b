#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Opening a directory read-only: the journal is replayed as it is, and nothing is written,
/// created or deleted. Entries left mid-edit are not readable; a corrupt journal reads as an
/// empty cache (the writer repairs it when it next opens).
extension CacheState {
    /// Replays the journal (or, in the middle of a writer's rebuild, its backup) without
    /// touching the directory, and keeps it open to check reads against what the writer
    /// appends.
    ///
    /// - Throws: ``CacheError/Code/notACacheDirectory``, ``CacheError/Code/ioFailure``.
    mutating func recoverReadOnly() throws(CacheError) -> RecoveryReport {
        var report = RecoveryReport()
        let viewFileSystem = directory.fileSystem
        readOnlyView?.close(fileSystem: viewFileSystem)
        readOnlyView = nil
        table.removeAll()
        size = 0
        // No journal at all: an empty cache, until a writer creates one and `refresh()` reads it.
        guard let (opened, status) = try openJournalForReading() else { return report }
        var removedKeys: Set<String> = []
        let (summary, consumed) = try replayOpenedJournal(opened, status: status, removedKeys: &removedKeys)
        if summary.firstLine == .foreign {
            try? fileSystem.close(opened.fd)
            table.removeAll()
            throw CacheError.notACacheDirectory(path: opened.path, reason: "its first line is not \(Journal.magic)")
        }
        if let corruption = summary.corruption {
            table.removeAll()
            report.wipeReason = corruption.description + " (read-only: nothing was deleted; the cache reads as empty)"
        }
        report.damagedJournalLines = summary.damagedLines.count
        report.droppedDamagedEntries = dropEntriesNamed(byDamagedLines: summary.damagedLines, removedKeys: &removedKeys)
        for index in table.indicesBeingEdited {
            table.remove(at: index)
            report.droppedIncompleteEntries += 1
        }
        guard let total = committedTotal() else {
            table.removeAll()
            report.wipeReason = "the journal's lengths add up past Int.max (read-only: the cache reads as empty)"
            readOnlyView = ReadOnlyView(
                path: opened.path, fd: opened.fd, identity: status.identity, replayedUpTo: consumed)
            return report
        }
        size = total
        readOnlyView = ReadOnlyView(
            path: directory.journalPath, fd: opened.fd, identity: status.identity,
            replayedUpTo: consumed - Int64(summary.unterminatedByteCount))
        return report
    }

    /// Replays the journal `openJournalForReading()` opened; closes it if the replay throws.
    mutating func replayOpenedJournal(
        _ opened: (path: String, fd: Int32), status: FileStatus, removedKeys: inout Set<String>
    ) throws(CacheError) -> (summary: JournalParser.Summary, consumed: Int64) {
        do {
            return try replayJournal(fd: opened.fd, path: opened.path, size: status.size, removedKeys: &removedKeys)
        } catch {
            try? fileSystem.close(opened.fd)
            throw error
        }
    }

    /// Opens the journal, or the backup a rebuild left, for reading; `nil` when neither exists.
    ///
    /// - Throws: ``CacheError/Code/ioFailure``, ``CacheError/Code/notACacheDirectory`` for a
    ///   journal that is not a regular file.
    func openJournalForReading() throws(CacheError) -> (file: (path: String, fd: Int32), status: FileStatus)? {
        var opened: (path: String, fd: Int32)?
        for path in [directory.journalPath, directory.backupJournalPath] {
            do {
                opened = (path, try fileSystem.open(path, flags: OpenFlags.readOnly, mode: 0))
                break
            } catch  where error.errno == Errno.noEntry {
                continue
            } catch {
                throw CacheError.ioFailure(error, operation: .open, path: path)
            }
        }
        guard let opened else { return nil }
        let status: FileStatus
        do {
            status = try fileSystem.status(of: opened.fd)
        } catch {
            try? fileSystem.close(opened.fd)
            throw CacheError.ioFailure(error, operation: .open, path: opened.path)
        }
        guard status.kind == .regular else {
            try? fileSystem.close(opened.fd)
            throw CacheError.notACacheDirectory(path: opened.path, reason: "it is not a regular file")
        }
        return (opened, status)
    }

    /// Follows the writer's journal for a read-only cache with subscribers: what the writer
    /// appended is read, and if it changed an entry the journal is replayed and each changed
    /// key recorded (committed if it is readable now, removed if not), in the order of its last
    /// line. A journal the writer replaced (rebuilt) is replayed and recorded as one `cleared`
    /// change: read again what you show.
    ///
    /// - Complexity: O(lines appended) when nothing changed; O(entries) for a replay.
    mutating func followWriter() throws(CacheError) {
        guard isReadOnly else { return }
        guard readOnlyView != nil else {
            // No journal when last replayed: one now is a cache that appeared.
            try refreshReadOnly()
            if readOnlyView != nil { changes.record(key: nil, kind: .cleared) }
            return
        }
        let fileSystem = directory.fileSystem
        readOnlyView?.catchUp(fileSystem: fileSystem)
        let before = readOnlyView
        var keys = before?.changedInOrder ?? []
        guard let before, before.isReplaced || !keys.isEmpty else { return }
        let formerRecords = before.isReplaced ? [:] : recordsOf(keys)
        try refreshReadOnly()
        // Lines the writer appended between the catch-up and the replay are in the table but
        // were not read above: they are read now, from the same journal.
        guard !before.isReplaced, let after = readOnlyView, after.identity == before.identity else {
            changes.record(key: nil, kind: .cleared)
            return
        }
        var gap = ReadOnlyView(path: after.path, fd: after.fd, identity: after.identity, replayedUpTo: before.lineStart)
        gap.catchUp(fileSystem: fileSystem)
        keys += gap.changedInOrder
        // Each key once, at the place of its last line.
        var seen: Set<String> = []
        var ordered: [String] = []
        for key in keys.reversed() where seen.insert(key).inserted { ordered.append(key) }
        for key in ordered.reversed() {
            let isReadable = table.index(of: key).map { table[$0].isReadable } ?? false
            var change = CacheChange(key: key, kind: isReadable ? .committed : .removed)
            if !isReadable, let (location, lengths) = formerRecords[key] {
                change.formerFirstValue = formerFirstValue(key: key, location: location, lengths: lengths)
            }
            changes.record(change)
        }
    }

    /// Where the readable entries of `keys` have their records (packed storage), before a
    /// replay drops those the writer removed. Only while someone observes.
    ///
    /// - Complexity: O(keys).
    private func recordsOf(_ keys: [String]) -> [String: (ValueLocation, SlotLengths)] {
        guard records != nil, changes.isObserved else { return [:] }
        var found: [String: (ValueLocation, SlotLengths)] = [:]
        for key in keys {
            guard let index = table.index(of: key), let lengths = table.readableLengths(index) else { continue }
            found[key] = (table.location(index), lengths)
        }
        return found
    }

    /// The first value of a removed entry's last record, if the writer has not compacted it
    /// away: one `pread` of a record whose key and checksum are checked (a record moved or
    /// reused is `nil`, and not counted as damage).
    func formerFirstValue(key: String, location: ValueLocation, lengths: SlotLengths) -> Data? {
        guard let records,
            case .found(let record)? = try? records.readRecord(
                key: key, location: location, lengths: lengths, cachedOnly: false, countsDamage: false),
            record.offsets.count > 0, record.offsets[0] >= 0
        else { return nil }
        return record.data(slot: 0)
    }

    /// Replays the journal again, for a read-only cache: entries the writer committed since
    /// become readable, removed ones disappear. A writer's cache has nothing to refresh.
    mutating func refreshReadOnly() throws(CacheError) {
        guard isReadOnly else { return }
        _ = try recoverReadOnly()
    }
}
