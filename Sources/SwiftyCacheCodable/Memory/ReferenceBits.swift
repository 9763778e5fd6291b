public import Synchronization

/// One bit per slot of a ``MemoryTier``'s dictionary: set by a hit, cleared when eviction gives
/// the value its second chance. A hit that finds the bit set writes nothing, so readers of the
/// same hot values do not bounce a cache line between cores; the bits are atomic because
/// readers set them concurrently, without the stripe's mutex (``ReadMostlyLock``).
///
/// Grown only by the tier's writers (exclusive access); read and set by anyone.
@usableFromInline
final class ReferenceBits: @unchecked Sendable {
    // @unchecked Sendable is sound: every access to the bits is atomic, and `bits`/`capacity`
    // change only in `reserve`, which the tier calls under its stripe's exclusive lock, when no
    // reader is inside (ReadMostlyLock's gate is closed and drained).
    // Unchecked: readers and writers never overlap (see above), and a dynamic exclusivity
    // check on every hit would cost more than the hit's own work.
    @exclusivity(unchecked) @usableFromInline private(set) var bits: UnsafeMutablePointer<Atomic<UInt8>>
    @exclusivity(unchecked) @usableFromInline private(set) var capacity: Int

    init() {
        capacity = 16
        bits = .allocate(capacity: 16)
        for index in 0..<16 { (bits + index).initialize(to: Atomic(0)) }
    }

    deinit {
        bits.deinitialize(count: capacity)
        bits.deallocate()
    }

    /// Makes room for slot `index` (writers only).
    ///
    /// - Complexity: amortized O(1): the capacity doubles.
    @usableFromInline
    func reserve(_ index: Int) {
        guard index >= capacity else { return }
        // Slot numbers are bounded by the values in memory, far from overflowing.
        let newCapacity = max(index &+ 1, capacity &* 2)
        let grown = UnsafeMutablePointer<Atomic<UInt8>>.allocate(capacity: newCapacity)
        for slot in 0..<newCapacity {
            let old: UInt8 = slot < capacity ? bits[slot].load(ordering: .relaxed) : 0
            (grown + slot).initialize(to: Atomic(old))
        }
        bits.deinitialize(count: capacity)
        bits.deallocate()
        bits = grown
        capacity = newCapacity
    }

    /// Marks slot `index` used, writing only if it was not marked yet.
    @inlinable
    func set(_ index: Int) {
        guard index < capacity, bits[index].load(ordering: .relaxed) == 0 else { return }
        bits[index].store(1, ordering: .relaxed)
    }

    /// Whether slot `index` is marked.
    func isSet(_ index: Int) -> Bool {
        index < capacity && bits[index].load(ordering: .relaxed) != 0
    }

    /// Clears slot `index` and returns whether it was set.
    @usableFromInline
    func clear(_ index: Int) -> Bool {
        guard index < capacity, bits[index].load(ordering: .relaxed) != 0 else { return false }
        bits[index].store(0, ordering: .relaxed)
        return true
    }
}
