/// Damage that stays local: a packed journal line whose check failed (``JournalLineCheck``)
/// costs the entries it may name, never the cache, and never serves an older value of them.
extension CacheState {
    /// Drops every entry that a damaged line may name: each word of the line that is a key of
    /// the index (the damage may have hit anything else), and each key whose tag the line
    /// carries (the damage may have hit the key). Their files become the cache's to delete
    /// (`removedKeys`). Returns how many entries were dropped.
    ///
    /// - Complexity: O(bytes of the damaged lines), plus one pass over the index to compare
    ///   tags when there are damaged lines.
    mutating func dropEntriesNamed(byDamagedLines lines: [[UInt8]], removedKeys: inout Set<String>) -> Int {
        guard !lines.isEmpty else { return 0 }
        var victims: Set<String> = []
        var tags: Set<UInt32> = []
        // A damaged block loaded none of its entries: it names nothing to drop (its bytes are
        // binary, where words and tags would be chance).
        for line in lines where !line.starts(with: JournalBlock.verb) {
            for word in line.split(whereSeparator: { $0 <= 0x20 || $0 == UInt8(ascii: "~") || $0 >= 0x7F }) {
                let candidate = String(decoding: word, as: UTF8.self)
                if table.index(of: candidate) != nil { victims.insert(candidate) }
            }
            tags.formUnion(JournalLineCheck.tags(in: line))
        }
        if !tags.isEmpty {
            for index in table.indicesInStorageOrder where tags.contains(JournalLineCheck.tag(of: table.key(at: index)))
            {
                victims.insert(table.key(at: index))
            }
        }
        for key in victims {
            guard let index = table.index(of: key) else { continue }
            table.remove(at: index)
            removedKeys.insert(key)
        }
        return victims.count
    }
}
