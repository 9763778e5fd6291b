/// The keys of the index: read back (from the record or the arena) and the arena's space reclaimed.
extension EntryTable {
    /// The key of the entry at `index`.
    func key(at index: Int) -> String {
        withKey(at: index) { String(decoding: $0, as: UTF8.self) }
    }

    /// The index of `key`'s entry (or `nil`) and the key's tag, for an insertion later in the
    /// same hold without hashing the key again (``indexInsertingIfAbsent(key:tag:valueCount:)``).
    ///
    /// - Complexity: O(1) expected: one hash of the key, one probe.
    func lookUp(_ key: String) -> (index: Int?, tag: UInt32) {
        return key.withUTF8Bytes { bytes in
            let tag = tag(of: bytes)
            return (index(ofKey: bytes, tag: tag), tag)
        }
    }

    /// ``indexInsertingIfAbsent(key:valueCount:)`` for a key whose tag ``lookUp(_:)`` gave.
    mutating func indexInsertingIfAbsent(key: String, tag: UInt32, valueCount: Int) -> (index: Int, isNew: Bool) {
        return key.withUTF8Bytes { indexInsertingIfAbsent(key: $0, tag: tag, valueCount: valueCount) }
    }

    /// The length in bytes of the key of the entry at `index`.
    func keyLength(at index: Int) -> Int { records[index].keyLength }

    /// Calls `body` with the key bytes of the entry at `index`: in place in the arena, or
    /// unpacked on the stack for a key held in its record.
    func withKey<Result>(at index: Int, _ body: (UnsafeBufferPointer<UInt8>) -> Result) -> Result {
        let record = records[index]
        if record.hasInlineKey { return record.inlineKey.withKey(length: record.keyLength, body) }
        return arena.withKey(at: record.keyOffset, length: record.keyLength, body)
    }

    /// Slides the live keys over the removed ones (see ``KeyArena/reclaim(owner:relocate:)``).
    ///
    /// - Complexity: O(arena), once the removed keys are a quarter of it.
    mutating func reclaimKeys() {
        var arena = self.arena
        self.arena = KeyArena()  // `arena` is now the only reference to the bytes
        arena.reclaim(
            owner: { offset, key in
                // Live keys have distinct offsets, and a moved key's new offset is below every
                // key not yet visited: the record at this offset owns these bytes.
                buckets.find(tag: tag(of: key)) { record in
                    !records[record].hasInlineKey && records[record].keyOffset == offset
                        && records[record].keyLength == key.count
                }
            },
            relocate: { record, newOffset in
                records[record].setKey(offset: newOffset, length: records[record].keyLength)
            })
        self.arena = arena
    }
}
