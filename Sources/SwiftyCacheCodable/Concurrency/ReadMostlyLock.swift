public import Synchronization

#if canImport(Darwin)
public import Darwin
#elseif canImport(Glibc)
@preconcurrency public import Glibc
#elseif canImport(Musl)
@preconcurrency public import Musl
#endif

/// A value guarded by a mutex whose readers, while no writer has come by lately, read it
/// without taking the mutex: each reader announces itself in a slot of its own thread (a cache
/// line no other running thread writes), so readers on different cores write no memory in
/// common and scale with the cores, where a mutex's cache line would bounce between them on
/// every read. A biased reader-writer lock, after Dice and Kogan's BRAVO.
///
/// - Readers (``read(_:)``) increment their slot, then look at the gate: open, they run their
///   body on the state as it is and leave; closed, they leave the slot and take the mutex.
///   A read body must not change the state except through atomics (the memory tier's reference
///   bits), must not block, and must not take this lock again.
/// - Writers (``withLock(_:)``) take the mutex, close the gate and wait for the readers already
///   inside to leave (a few hundred nanoseconds: the readers never block), then change the
///   state. The gate stays closed, and reads take the mutex, until ``reopenAfter`` reads in a
///   row have passed through the mutex with no write between them: a write-heavy phase pays the
///   mutex, as a plain lock would, and not a scan of the slots per write.
/// - ``inspect(_:)`` takes the mutex without closing the gate, for bodies that only read (counts,
///   statistics): it excludes writers, not readers.
///
/// Each slot also holds a few counters (``count(_:)``), added to by the thread that owns it, so
/// that counting a hit or a miss writes nothing that another core reads on its next operation;
/// ``readCountingFound(_:)`` counts into counter 0 with the same instruction that leaves.
///
/// The gate and the slots are sequentially consistent where they meet (a reader's increment
/// before its look at the gate; a writer's closing before its look at the slots), so of a
/// reader and a writer arriving together at least one sees the other. Threads take slots in
/// turn as they first read (``ReaderSlots/current``); past ``slotCount`` threads, two may share
/// a slot, which stays correct (the count is atomic) and only costs them the shared cache line.
///
/// - Complexity: a read, O(1) and no shared write while the gate is open; a write, one mutex
///   plus, when the gate was open, one look at each of the ``slotCount`` slots.
@usableFromInline
package struct ReadMostlyLock<State: ~Copyable>: @unchecked Sendable {
    // @unchecked Sendable is sound: `State` is changed only inside `withLock`, under the mutex
    // and with the gate closed after every reader inside has left (the gate's protocol above),
    // and read either under the mutex or inside `read` with the reader counted in its slot, so
    // no read overlaps a write. The pointers are allocated once in `ReadMostlyLockStorage`,
    // never moved, and freed in its deinit, when no copy of this struct is left to use them.
    @usableFromInline let storage: ReadMostlyLockStorage<State>
    // The storage's pointers, copied here so that a read touches no reference count: a retain
    // of the shared storage object would be a write to memory every core reads.
    @usableFromInline let state: UnsafeMutablePointer<State>
    @usableFromInline let mutex: UnsafeMutablePointer<pthread_mutex_t>
    @usableFromInline let gate: UnsafeMutableRawPointer

    /// Slots per lock: threads beyond this many share one.
    @inlinable package static var slotCount: Int { 16 }
    /// Counters per slot.
    @inlinable package static var counterCount: Int { 4 }
    /// Reads through the mutex, with no write between them, after which the gate reopens.
    @inlinable package static var reopenAfter: Int { 32 }
    /// Bytes between two slots: two cache lines, since Intel's prefetcher fetches lines in pairs.
    @inlinable static var lineSize: Int { 128 }

    package init(_ state: consuming State) {
        storage = ReadMostlyLockStorage(state, slotCount: Self.slotCount, lineSize: Self.lineSize)
        self.state = storage.state
        mutex = storage.mutex
        gate = storage.gate
    }

    // Line 0: the gate (1 open, 0 closed). Line 1: the reads through the mutex since the last
    // write (under the mutex). Lines 2...: the slots, each a reader count then the counters.
    @inlinable var isOpen: UnsafeMutablePointer<Atomic<Int>> {
        gate.assumingMemoryBound(to: Atomic<Int>.self)
    }

    @inlinable var quietReads: UnsafeMutablePointer<Int> {
        (gate + Self.lineSize).assumingMemoryBound(to: Int.self)
    }

    @inlinable func slot(_ index: Int) -> UnsafeMutablePointer<Atomic<Int>> {
        (gate + Self.lineSize * (2 + index)).assumingMemoryBound(to: Atomic<Int>.self)
    }

    /// The calling thread's slot.
    @inlinable var currentSlot: UnsafeMutablePointer<Atomic<Int>> {
        slot(ReaderSlots.current & (Self.slotCount - 1))
    }

    /// Runs `body` on the state without the mutex while the gate is open, else under the mutex,
    /// and returns what it returns. `body` may run concurrently with other readers' bodies; it
    /// must not change the state except through atomics, block, or take this lock. It borrows
    /// the state in place: for a `~Copyable` state nothing is copied (a copy would retain
    /// everything the state holds, a write to memory every reader writes).
    ///
    /// - Complexity: O(1) plus `body`; while the gate is open, no write to memory other threads
    ///   use.
    @inlinable
    package func read<Result>(_ body: (borrowing State) -> Result) -> Result {
        read(in: currentSlot, body)
    }

    /// ``read(_:)``, adding one to counter 0 of the calling thread's slot when `body` finds
    /// something: the reader's leaving and the count are one atomic addition (counter 0 shares
    /// the reader count's word), so a counted read costs two atomic instructions, not three.
    @inlinable
    package func readCountingFound<Result>(_ body: (borrowing State) -> Result?) -> Result? {
        let slot = currentSlot
        slot[0].wrappingAdd(1, ordering: .sequentiallyConsistent)
        guard isOpen[0].load(ordering: .sequentiallyConsistent) == 1 else {
            slot[0].wrappingSubtract(1, ordering: .releasing)
            let result = readThroughMutex(body)
            if case .some = result { slot[1].wrappingAdd(1, ordering: .relaxed) }
            return result
        }
        let result = body(state.pointee)
        guard case .some = result else {
            slot[0].wrappingSubtract(1, ordering: .releasing)
            return result
        }
        let before = slot[0].wrappingAdd(Self.packedUnit &- 1, ordering: .releasing).oldValue
        if before >= Self.packedSpill { spill(slot) }
        return result
    }

    @inlinable
    func read<Result>(in slot: UnsafeMutablePointer<Atomic<Int>>, _ body: (borrowing State) -> Result)
        -> Result
    {
        slot[0].wrappingAdd(1, ordering: .sequentiallyConsistent)
        if isOpen[0].load(ordering: .sequentiallyConsistent) == 1 {
            let result = body(state.pointee)
            slot[0].wrappingSubtract(1, ordering: .releasing)
            return result
        }
        slot[0].wrappingSubtract(1, ordering: .releasing)
        return readThroughMutex(body)
    }

    // A slot's first word: the readers inside in its low 16 bits (threads sharing one slot, far
    // fewer than 65,536), counter 0's fast lane above them. Before the lane could carry into the
    // sign bit, its count moves to counter 0's own word (added there first, so that a `total`
    // racing with the move counts high for a moment, never low).
    @inlinable static var readerBits: Int { 16 }
    @inlinable static var readerMask: Int { (1 << readerBits) - 1 }
    @inlinable static var packedUnit: Int { 1 << readerBits }
    @inlinable static var packedSpill: Int { 1 << 61 }

    /// Moves part of the calling thread's fast-lane count to counter 0's own word, as a counted
    /// read does before the lane could overflow; totals and the reader count are unchanged (for
    /// tests: the lane reaches the threshold only after 2⁴⁵ counted reads on one slot).
    package func spillCurrentSlot() { spill(currentSlot) }

    @usableFromInline
    func spill(_ slot: UnsafeMutablePointer<Atomic<Int>>) {
        let lane = Self.packedSpill >> Self.readerBits
        slot[1].wrappingAdd(lane, ordering: .relaxed)
        slot[0].wrappingSubtract(Self.packedSpill, ordering: .relaxed)
    }

    /// A read that found the gate closed: under the mutex, counted towards reopening it.
    @inlinable
    func readThroughMutex<Result>(_ body: (borrowing State) -> Result) -> Result {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        let result = body(state.pointee)
        quietReads.pointee += 1
        if quietReads.pointee >= Self.reopenAfter { isOpen[0].store(1, ordering: .releasing) }
        return result
    }

    /// Runs `body` with exclusive access to the state: under the mutex, with the gate closed and
    /// every reader out.
    ///
    /// - Complexity: O(1) plus `body` while the gate is closed; O(``slotCount``) to close it.
    @inlinable
    package func withLock<Result, Failure: Error>(_ body: (inout State) throws(Failure) -> Result) throws(Failure)
        -> Result
    {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        closeGate()
        return try body(&state.pointee)
    }

    /// Runs `body` under the mutex without closing the gate: writers are kept out, readers are
    /// not, so `body` only reads.
    @inlinable
    package func inspect<Result>(_ body: (borrowing State) -> Result) -> Result {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return body(state.pointee)
    }

    /// Closes the gate (under the mutex) and waits until no reader is inside.
    @usableFromInline
    func closeGate() {
        quietReads.pointee = 0
        guard isOpen[0].load(ordering: .relaxed) == 1 else { return }
        isOpen[0].store(0, ordering: .sequentiallyConsistent)
        for index in 0..<Self.slotCount {
            let readers = slot(index)
            var spins = 0
            // A reader inside never blocks or waits for this lock, so this ends; readers
            // arriving now see the gate closed and leave at once.
            while readers[0].load(ordering: .sequentiallyConsistent) & Self.readerMask != 0 {
                spins += 1
                if spins >= 64 { sched_yield() }
            }
        }
    }

    /// Adds one to counter `counter` (below ``counterCount``) of the calling thread's slot.
    @inlinable
    package func count(_ counter: Int) {
        currentSlot[1 + counter].wrappingAdd(1, ordering: .relaxed)
    }

    /// Counter `counter` summed over every slot.
    ///
    /// - Complexity: O(``slotCount``).
    package func total(_ counter: Int) -> Int {
        (0..<Self.slotCount).reduce(0) { sum, index in
            let lane = counter == 0 ? slot(index)[0].load(ordering: .relaxed) >> Self.readerBits : 0
            return sum &+ slot(index)[1 + counter].load(ordering: .relaxed) &+ lane
        }
    }

    /// Whether readers may enter without the mutex now (for tests).
    package var isGateOpen: Bool { isOpen[0].load(ordering: .acquiring) == 1 }
}
