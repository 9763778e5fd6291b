import Synchronization

/// One finished ``JSONEncodingState`` kept for the next encode with the same options: a cache
/// encodes value after value with one format, and a state (an object, its frames and a buffer
/// of a few hundred bytes) costs about a thousand instructions to make and free each time.
///
/// A thread that finds the slot free takes it, encodes, and gives the state back; one that
/// finds it taken makes a state of its own, as without a slot. A state goes back only when
/// nothing else holds it (a value's `encode(to:)` that kept its encoder would otherwise write
/// into another value's text later) and its buffer is small (a large value's buffer is not kept
/// for the life of the cache).
final class JSONEncodingStateSlot: @unchecked Sendable {
    // @unchecked Sendable is sound: `spare` is read and written only by the thread that moved
    // `isTaken` from false to true (acquiring), and that thread's last access to it comes before
    // it stores false (releasing): accesses to `spare` are ordered one after another by the
    // flag, never concurrent.
    private let isTaken = Atomic<Bool>(false)
    private var spare: JSONEncodingState?

    /// The largest buffer a state keeps when it goes back.
    static let keptCapacity = 64 * 1024

    init() {}

    /// The buffer capacity of the state kept, if one is (taking the slot to look): for tests.
    func spareCapacity() -> Int? {
        guard isTaken.compareExchange(expected: false, desired: true, ordering: .acquiring).exchanged else {
            return nil
        }
        defer { isTaken.store(false, ordering: .releasing) }
        return spare?.bytes.capacity
    }

    /// Runs `body` with the slot's state (or a new one, if the slot is empty or in use) and keeps
    /// it for the next call when it may be.
    func withState<R>(
        options: DirectJSONEncoder.Options, _ body: (JSONEncodingState) throws -> R
    ) rethrows -> R {
        guard isTaken.compareExchange(expected: false, desired: true, ordering: .acquiring).exchanged else {
            return try body(JSONEncodingState(options: options))
        }
        var state = spare.take().flatMap { $0.options === options ? $0 : nil } ?? JSONEncodingState(options: options)
        defer {
            if isKnownUniquelyReferenced(&state), state.resetForReuse(keepingCapacity: Self.keptCapacity) {
                spare = state
            }
            isTaken.store(false, ordering: .releasing)
        }
        return try body(state)
    }
}
