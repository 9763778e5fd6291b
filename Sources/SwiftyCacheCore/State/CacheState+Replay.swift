/// Replaying the journal into the index: streamed 64 KiB at a time through the parser, applied
/// in batches (``ReplayBatch``) by ``replay(_:tag:_:removedKeys:)``, Java's rules.
extension CacheState {
    /// Streams the journal through a ``JournalParser`` into the index, 64 KiB at a time. Stops
    /// at once on a file that is not a journal; after a corrupt line, reads on only to learn
    /// which keys the rest names.
    ///
    /// - Parameter size: The file's size, for a bounded estimate of the index's capacity.
    mutating func replayJournal(
        size: Int64, removedKeys: inout Set<String>, recent: inout RecentCommits?
    ) throws(CacheError) -> JournalParser.Summary {
        let path = directory.journalPath
        let fd: Int32
        do {
            fd = try fileSystem.open(path, flags: OpenFlags.readOnly, mode: 0)
        } catch {
            throw CacheError.ioFailure(error, operation: .open, path: path)
        }
        defer { try? fileSystem.close(fd) }
        return try replayJournal(fd: fd, path: path, size: size, removedKeys: &removedKeys, recent: &recent).summary
    }

    /// Streams the journal open at `fd`; returns what the parser saw and how many bytes it read.
    mutating func replayJournal(
        fd: Int32, path: String, size: Int64, removedKeys: inout Set<String>
    ) throws(CacheError) -> (summary: JournalParser.Summary, consumed: Int64) {
        var recent: RecentCommits?
        return try replayJournal(fd: fd, path: path, size: size, removedKeys: &removedKeys, recent: &recent)
    }

    /// ``replayJournal(fd:path:size:removedKeys:)``, noting in `recent` (when not `nil`) the
    /// entries each commit left the newest: kept in a local, out of the replay's inner loop.
    mutating func replayJournal(
        fd: Int32, path: String, size: Int64, removedKeys: inout Set<String>, recent: inout RecentCommits?
    ) throws(CacheError) -> (summary: JournalParser.Summary, consumed: Int64) {
        // A rebuilt journal has one line of 40 or more bytes per entry; the estimate is capped,
        // never taken from an untrusted count.
        table.reserveCapacity(Int(clamping: min(size / 40, 1 << 16)))
        var parser = JournalParser(appVersion: journal.appVersion, valueCount: valueCount, format: replayFormat)
        let chunk = UnsafeMutableRawBufferPointer.allocate(byteCount: 64 << 10, alignment: 16)
        defer { chunk.deallocate() }
        var offset: Int64 = 0
        // Records are applied a batch at a time, their memory in the index touched first.
        var batch = ReplayBatch()
        var hasReservedForBlocks = false
        // The tags of a block's keys, in a buffer kept from block to block.
        var blockTags: [UInt32] = []
        blockTags.reserveCapacity(JournalBlock.maximumEntries)
        func applyBatch() {
            guard !batch.isEmpty else { return }
            batch.prefetch(in: table)
            batch.drain { key, tag, operation in
                replay(key, tag: tag, operation, removedKeys: &removedKeys)
                // A commit leaves its entry the newest.
                if recent != nil, case .clean = operation { recent?.note(EntryTable.index(table.newestRecord)) }
            }
        }
        while true {
            let count: Int
            do {
                count = try fileSystem.read(fd, into: chunk, at: offset)
            } catch {
                throw CacheError.ioFailure(error, operation: .open, path: path)
            }
            if count == 0 { break }
            offset += Int64(count)
            parser.consume(
                UnsafeRawBufferPointer(rebasing: chunk[0..<count]),
                keyBytes: { key, operation in
                    batch.append(key, operation)
                    if batch.isFull { applyBatch() }
                },
                blocks: { block in
                    applyBatch()
                    if !hasReservedForBlocks {
                        hasReservedForBlocks = true
                        reserveForBlocks(like: block, journalSize: size)
                    }
                    replayBlock(block, tags: &blockTags, removedKeys: &removedKeys)
                    if recent != nil {
                        // The block's entries are now the newest ones, in its order.
                        let newest = table.newestIndices(min(block.count, RecentCommits.capacity))
                        for index in newest.reversed() { recent?.note(index) }
                    }
                })
            if !parser.wantsMoreInput { break }
        }
        applyBatch()
        return (parser.finish(), offset)
    }

    /// Applies a `BLOCK` line's entries (``JournalBlock``) as its `CLEAN` lines would be, the
    /// way a saved index is loaded: their buckets touched first, then each new key appended
    /// as the most recently used entry with one probe; a key already present is replayed as a
    /// `CLEAN` line. `tags` is scratch space the caller keeps between blocks.
    ///
    /// - Complexity: O(entries).
    mutating func replayBlock(
        _ block: borrowing JournalBlock.Decoded, tags: inout [UInt32], removedKeys: inout Set<String>
    ) {
        tags.removeAll(keepingCapacity: true)
        block.forEachKey { _, key in tags.append(table.tag(of: key)) }
        table.prefetch(tags: tags)
        block.forEachKey { index, key in
            let (lengths, location) = block.entry(index)
            if !table.appendCommitted(key: key, tag: tags[index], lengths: lengths, location: location) {
                replay(key, tag: tags[index], .clean(lengths: lengths, location: location), removedKeys: &removedKeys)
            }
        }
    }

    /// Makes room for the entries a journal of blocks like `block` holds, estimated from the
    /// journal's size and bounded by a sixteenth of it (a journal of blocks then a flood of
    /// other lines must not reserve much more memory than it takes), so that loading it does
    /// not grow the index's arrays a doubling at a time.
    mutating func reserveForBlocks(like block: borrowing JournalBlock.Decoded, journalSize: Int64) {
        guard table.count == 0, block.count > 0, block.encodedBytes > 0 else { return }
        let bytesPerEntry = max(1, block.encodedBytes / block.count)
        let estimate = Int(clamping: min(journalSize / Int64(bytesPerEntry), journalSize / 16))
        // The arena holds each key and its length byte.
        let keyBytesPerEntry = block.keyByteCount / block.count + 1
        table.reserveCapacity(
            estimate, keyBytes: estimate.multipliedReportingOverflow(by: keyBytesPerEntry).partialValue)
    }

    /// Applies one journal record to the index, as the Java cache does: every mention of a key
    /// except `REMOVE` makes it the most recently used. Removed keys are remembered: their
    /// leftover files are the cache's to delete.
    ///
    /// - Complexity: O(1): one hash lookup (a `CLEAN` or `DIRTY` of a new key inserts with the
    ///   same probe) and one in-place update; the key's bytes go from the journal's into the
    ///   index (a `String` only for a removed key).
    mutating func replay(
        _ key: UnsafeBufferPointer<UInt8>, tag: UInt32, _ operation: Journal.Operation, removedKeys: inout Set<String>
    ) {
        switch operation {
        case .remove:
            if let index = table.index(ofKey: key, tag: tag) { table.remove(at: index) }
            removedKeys.insert(String(decoding: key, as: UTF8.self))
        case .read:
            if let index = table.index(ofKey: key, tag: tag) { table.touch(index) }
        case .dirty:
            let index = table.indexInsertingIfAbsent(key: key, tag: tag, valueCount: valueCount).index
            table.touch(index)
            table.setEditor(index, UInt64.max)
        case .clean(let lengths, let location):
            let index = table.indexInsertingIfAbsent(key: key, tag: tag, valueCount: valueCount).index
            table.touch(index)
            table.setCommitted(index, lengths: lengths, location: location)
        case .move(let location):
            if let index = table.index(ofKey: key, tag: tag), table.isReadable(index) {
                table.setLocation(index, location)
            }
        case .tail(let location):
            // The key is the identity, sixteen digits; anything else names no log.
            if let identity = UInt64(String(decoding: key, as: UTF8.self), radix: 16), key.count == 16 {
                replayedLogTail = (identity, location)
            }
        }
    }
}
