/// Shrinking the memory tier when the system is short of memory.
extension ObjectCache: MemoryTrimming {
    /// Shrinks the memory tier; the disk keeps every value. The cache calls it itself on Apple
    /// platforms' memory-pressure events (unless ``ObjectCacheConfiguration/trimsMemoryUnderPressure``
    /// is off); call it from your own low-memory handling on any platform.
    ///
    /// Unsaved values are never dropped: those in the way are written first (``MemoryTrim/everything``
    /// writes them all as one batch), and one whose write fails stays in memory, unsaved, the
    /// failure going to the event handler.
    ///
    /// - Parameter trim: How far to shrink: ``MemoryTrim/warning``, ``MemoryTrim/critical``,
    ///   or ``MemoryTrim/keeping(fraction:)``.
    /// - Complexity: O(values dropped + unsaved values passed over) for `keeping`; O(values in
    ///   memory) for `everything`.
    public func trimMemory(_ trim: MemoryTrim) {
        switch trim {
        case .everything:
            if !memory.unsaved.isEmpty { try? save() }
            clearMemory()
        case .keeping(let fraction):
            let kept = fraction.isNaN ? 0 : min(1, max(0, fraction))
            var mustSave: [MemoryTier<Key, Value>.PendingSave] = []
            for stripe in memory.stripes.indices {
                mustSave += memory.withLock(stripe: stripe) { tier in
                    let target = Int((Double(tier.count) * kept).rounded(.down))
                    return tier.evict(count: tier.count - target, bytes: 0)
                }
            }
            if !mustSave.isEmpty { saveAndDrop(mustSave) }
        }
    }
}
