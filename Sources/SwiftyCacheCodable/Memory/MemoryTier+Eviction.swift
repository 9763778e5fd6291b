/// Eviction: the least recently used saved values go first, a value hit since the walk last
/// passed it gets a second chance, and an unsaved value is handed back to be saved, never dropped.
extension MemoryTier {
    /// Evicts least recently used saved values until the limits hold. Unsaved values in the
    /// way are returned, still in memory, for the caller to save and then evict.
    ///
    /// - Complexity: O(evicted + unsaved values passed over).
    @inlinable
    mutating func trim() -> [PendingSave] {
        evict(count: max(0, items.count - countLimit), bytes: byteLimit.map { max(0, totalCost - $0) } ?? 0)
    }

    /// Evicts least recently used saved values until `count` values are accounted for and
    /// `bytes` encoded bytes freed. Unsaved values in the way count towards `count` and are
    /// returned, still in memory, for the caller to save and then evict. A value hit since the
    /// walk last passed it gets a second chance: its bit is cleared and it becomes the newest.
    /// The newest value (the one just stored, when called after a store) goes last, so that a
    /// store never evicts the value it stored while another could go.
    ///
    /// - Complexity: O(evicted + unsaved values passed over + second chances given), amortized
    ///   O(evicted + unsaved values passed over): each second chance clears a bit that a hit set.
    ///   The walk visits each value at most twice (a value moved has its bit cleared).
    @inlinable
    mutating func evict(count: Int, bytes: Int) -> [PendingSave] {
        // No nested function: in this unspecialized generic code its captures would be boxed
        // on the heap at every eviction.
        var mustSave: [PendingSave] = []
        var removed = 0
        var freed = 0
        let protected = items.newest
        var cursor = items.eldest
        while cursor != -1 && (removed + mustSave.count < count || freed < bytes) {
            let next = items.indexAfter(cursor)
            if cursor != protected {
                if referenced.clear(cursor) {
                    items.touch(cursor)
                } else {
                    take(cursor, mustSave: &mustSave, removed: &removed, freed: &freed)
                }
            }
            cursor = next
        }
        // Every other value is gone or unsaved: the newest goes too, if the limits want it.
        if (removed + mustSave.count < count || freed < bytes) && protected != -1 {
            take(protected, mustSave: &mustSave, removed: &removed, freed: &freed)
        }
        return mustSave
    }

    /// Evicts the value at `index`, or hands it over to be saved first if it is unsaved.
    @inlinable
    mutating func take(_ index: Int, mustSave: inout [PendingSave], removed: inout Int, freed: inout Int) {
        // Read in place: a saved value is only removed, never copied.
        guard let isUnsaved = items.withValue(at: index, { $0.isUnsaved }) else { return }
        if isUnsaved {
            guard let key = items.key(at: index), let item = items.value(at: index) else { return }
            mustSave.append(
                PendingSave(
                    key: key, hash: items.hash(at: index), value: item.value, version: item.version,
                    expires: item.expires))
        } else if let gone = items.remove(at: index) {
            freed += gone.cost
            removed += 1
            totalCost -= gone.cost
            statistics.memoryEvictions += 1
        }
    }
}
