/// After a crash: values whose files reached the disk by name and size but not by content.
///
/// A value file is written, then renamed into place with no sync unless `syncsWrites` is on
/// (the Java cache's way). ext4 (with `dioread_nolock`, its default since Linux 5.6) may commit
/// the rename and the file's size before the file's data: the data is written back later, and
/// its blocks are marked written only once it is. A power cut in between leaves a file of the
/// recorded length that reads as zeros, which no check of the Java layout can tell from a value.
/// A kill leaves nothing of the kind (the data is in the system's memory), but cannot be told
/// from a power cut here.
///
/// So the first open after any session that did not close cleanly reads back the files of
/// the values committed last: those modified within ``unwrittenValueWindow`` of the journal's
/// last change, the most recent commits first. A file with a 4 KiB block (by offset) entirely
/// of zeros is taken for one left unwritten, and its entry is dropped: it reads as a miss,
/// never as zeros. A value that truly held such a block, written in that window before a crash,
/// is dropped too: a miss, the price of never serving zeros for a value.
extension CacheState {
    /// How long before the journal's last change a value file counts as possibly unwritten:
    /// ext4 writes new data back within about 30 seconds and commits every 5; the margin covers
    /// a loaded disk.
    static let unwrittenValueWindow: Int64 = 300

    /// How many committed entries in a row, all of whose files are older than the window, end
    /// the walk back through the recent commits (the journal's order is the order the files
    /// were written in, give or take the writers running at once).
    static let olderEntriesEndingTheWalk = 64

    /// Drops the entries among `recent` (the replay's last commits) whose value files a crash
    /// may have left unwritten (see above); returns how many. Call after a replay of a journal
    /// no clean close vouched for, before the sweep (which deletes the dropped entries' files,
    /// their keys added to `removedKeys`).
    ///
    /// - Complexity: One `lstat` per file of the entries walked: the ones committed within the
    ///   window, then ``olderEntriesEndingTheWalk`` more with files, at most
    ///   ``RecentCommits/capacity`` entries; the files modified within the window are opened,
    ///   read whole and closed. Entries without files (packed records) cost a lookup each.
    mutating func dropValuesLeftUnwritten(
        _ recent: RecentCommits, journalModified: Int64, removedKeys: inout Set<String>
    ) -> Int {
        guard !isReadOnly else { return 0 }
        let since = journalModified.subtractingReportingOverflow(Self.unwrittenValueWindow).partialValue
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 64 << 10, alignment: 16)
        defer { buffer.deallocate() }
        var visited: Set<Int> = []
        var olderInARow = 0
        var victims: [String] = []
        recent.forEachNewestFirst { index in
            guard table.isLive(slot: index), table.isReadable(index) else { return true }
            let entry = table[index]
            // An entry without files (a packed record) neither ends the walk nor extends it.
            guard storage.keepsFiles(location: entry.location, lengths: entry.lengths),
                visited.insert(index).inserted
            else { return true }
            let key = table.key(at: index)
            var isRecent = false
            var isUnwritten = false
            for slot in 0..<valueCount where entry.lengths[slot] > 0 {
                guard storage.isFileSlot(slot, location: entry.location, lengths: entry.lengths) else { continue }
                let path = storage.path(key: key, slot: slot, staged: false)
                switch checkFile(atPath: path, length: entry.lengths[slot], modifiedSince: since, buffer: buffer) {
                case .older: continue
                case .written: isRecent = true
                case .unwritten:
                    isRecent = true
                    isUnwritten = true
                }
                if isUnwritten { break }
            }
            if isUnwritten { victims.append(key) }
            olderInARow = isRecent ? 0 : olderInARow + 1
            return olderInARow < Self.olderEntriesEndingTheWalk
        }
        for key in victims {
            guard let index = table.index(of: key) else { continue }
            table.remove(at: index)
            removedKeys.insert(key)
        }
        return victims.count
    }

    /// What a value file's check found.
    private enum FileCheck {
        /// Modified before the window (or not a regular file of the recorded length: a read
        /// reports that as a miss itself): not read.
        case older
        /// Read whole; no block of zeros.
        case written
        /// Read whole; a 4 KiB block, or the last partial one, entirely of zeros.
        case unwritten
    }

    /// Reads the file at `path` when it is a regular file of `length` bytes modified at
    /// `since` or later, and looks for a block of zeros in it. An error reading it is left
    /// for the value's next read to report.
    private func checkFile(
        atPath path: String, length: Int, modifiedSince since: Int64, buffer: UnsafeMutableRawBufferPointer
    ) -> FileCheck {
        let fileSystem = self.fileSystem
        // An older file costs one `lstat`; a recent one is opened (never through a link) and
        // checked again.
        guard let named = try? fileSystem.status(atPath: path), named.modificationSeconds >= since,
            let fd = try? fileSystem.open(path, flags: OpenFlags.readOnly, mode: 0)
        else { return .older }
        defer { try? fileSystem.close(fd) }
        guard let status = try? fileSystem.status(of: fd), status.kind == .regular,
            status.size == Int64(length), status.modificationSeconds >= since
        else { return .older }
        var offset = 0
        while offset < length {
            let wanted = min(buffer.count, length - offset)
            let chunk = UnsafeMutableRawBufferPointer(rebasing: buffer[0..<wanted])
            guard let count = try? fileSystem.readFully(fd, into: chunk, at: Int64(offset)), count == wanted else {
                return .written
            }
            // The chunk starts at a multiple of the buffer's size, itself a multiple of 4 KiB.
            for start in stride(from: 0, to: count, by: 4096) {
                let block = UnsafeRawBufferPointer(rebasing: chunk[start..<min(count, start + 4096)])
                if block.allSatisfy({ $0 == 0 }) { return .unwritten }
            }
            offset += count
        }
        return .written
    }
}
