/// Packed storage's segments as the directory's log (``Journal/packedLogMagic``): a durable
/// commit syncs the segment it appends to and nothing else, and an open after a crash applies
/// what the log holds past the journal's last `TAIL` line (``LogPrefix``).
///
/// The rule that keeps it sound: a `TAIL` line names the position of the next append, and
/// every record before it has its line earlier in the journal (a commit appends its record
/// and journals its line in one lock hold, so a `TAIL` journaled after them covers them).
/// What the log holds after it is applied in order, each change only over an entry whose
/// record was written before it: a set whose line did reach the disk finds its own record,
/// and one a later commit replaced finds the later one. A removal that returns journals its
/// line and a `TAIL` line past the records it removes (one sync, of the journal); a batch's
/// removals are written to the log with its sets. Evictions are not: after a crash an entry
/// evicted since the last `TAIL` line may come back, until the next eviction.
extension CacheState {
    /// The `TAIL` line's key: the session's identity in sixteen hexadecimal digits.
    var logTailKey: String {
        let digits = String(logIdentity, radix: 16)
        return String(repeating: "0", count: max(0, 16 - digits.count)) + digits
    }

    /// Where a `TAIL` line may point now: where the next append goes, or where a group
    /// awaiting its sync starts, whichever comes first.
    var logTailPosition: ValueLocation {
        guard let packed = records else { return .none }
        let next = packed.logPosition
        guard let pending = pendingGroupStart, pending.precedes(next) else { return next }
        return pending
    }

    /// Bytes the log may grow past its last `TAIL` line before a commit journals another (and
    /// with `syncsWrites` syncs the journal): what an open after a crash reads at most, beside
    /// the records of the last batch.
    static let logTailInterval: Int64 = 8 << 20

    /// Starts this session's log, after recovery: a cache with `syncsWrites` makes packed
    /// storage's segments the log (once: the journal is rewritten under
    /// ``Journal/packedLogMagic``, which earlier releases refuse); in a directory whose segments
    /// are its log, the session's `TAIL` line names its identity before anything is appended.
    /// A failure leaves the journal broken: every call that needs it rebuilds it first (the
    /// rebuilt journal ends its prefix with the `TAIL` line) or throws.
    mutating func beginLogSession() {
        // Sharing: no cache knows the others' log tails; each commit syncs its journal line.
        guard !isReadOnly, !isShared, let packed = records else { return }
        if journal.syncsWrites && !journal.logsRecords {
            let marked = journal.marksBatches
            journal.logsRecords = true
            journal.marksBatches = true
            do {
                try rebuildJournal()
            } catch {
                // Left as it was: this session commits with the syncs of the journal.
                journal.logsRecords = false
                journal.marksBatches = marked
                return
            }
        }
        guard journal.logsRecords else { return }
        packed.beginLog(identity: logIdentity)
        journalLogTail(durably: true, operation: .open)
    }

    /// Journals a `TAIL` line at the log's position and writes it; with `durably` and
    /// `syncsWrites`, syncs the journal too. A failure leaves the journal broken, as any.
    mutating func journalLogTail(durably: Bool, operation: CacheError.Operation) {
        guard journal.logsRecords, journal.failure == nil, let packed = records else { return }
        journal.append(.tail(logTailPosition), key: logTailKey)
        do {
            try journal.flush(operation: operation)
            if durably { try journal.syncIfDurable(operation: operation, key: nil, includesDirectory: false) }
            packed.noteTailJournaled()
        } catch {
            return
        }
    }

    /// After a commit to the log: journals a `TAIL` line once the log has grown by
    /// ``logTailInterval`` since the last, so that an open after a crash reads little.
    ///
    /// - Complexity: O(1); a `TAIL` line (and with `syncsWrites` a sync of the journal) once
    ///   per ``logTailInterval`` bytes.
    mutating func noteLoggedCommit() {
        guard journal.logsRecords, let packed = records, packed.loggedBytesSinceTail > Self.logTailInterval else {
            return
        }
        journalLogTail(durably: true, operation: .commit)
    }

    /// After a replay that did not follow a clean close: applies what the log holds past the
    /// last `TAIL` line, in order, each change only over an entry whose record was written
    /// before it (see the rule above). Returns how many changes it applied; the caller
    /// rewrites the journal when it applied any.
    ///
    /// - Complexity: O(bytes of the log past the `TAIL` line).
    mutating func applyLog(removedKeys: inout Set<String>) -> Int {
        guard journal.logsRecords, let packed = records, let tail = replayedLogTail else { return 0 }
        var applied = 0
        _ = packed.scanLog(from: tail.location, identity: tail.identity) { changes in
            for change in changes {
                let existing = table.index(of: change.key)
                let isOlder = existing.map { !table[$0].isReadable || table.location($0).precedes(change.position) }
                if let lengths = change.lengths {
                    guard isOlder ?? true else { continue }
                    let index = existing ?? table.insert(key: change.key, valueCount: valueCount)
                    table.touch(index)
                    table.setCommitted(index, lengths: lengths, location: change.position)
                    applied += 1
                } else {
                    guard let existing, isOlder == true, table[existing].isReadable else { continue }
                    table.remove(at: existing)
                    removedKeys.insert(change.key)
                    applied += 1
                }
            }
        }
        return applied
    }
}
