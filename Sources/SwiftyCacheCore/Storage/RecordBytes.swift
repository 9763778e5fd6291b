#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The bytes of a packed record, read and checked once, shared by the snapshot that opened
/// it: the snapshot reads the values as they were, whatever compaction or later commits do.
///
/// The bytes are a plain allocation, not an array: the arrays a read made here went through the
/// standard library's unspecialized allocation, which looks the array's type up in the
/// runtime's metadata table on every call (about 5% of two packed readers' time in `perf`),
/// and that table's reader count is memory every reading core writes.
final class RecordBytes: @unchecked Sendable {
    // @unchecked Sendable is sound: `storage` is written only before `init` returns (the
    // reader fills it, then hands it over), never afterwards, and deallocated in deinit, when
    // no reference to the object is left. Every other stored property is an immutable value.
    /// The record; immutable once the object exists.
    private let storage: UnsafeMutableRawBufferPointer
    /// Where each slot's value starts in the record, `-1` for a slot kept in a file (held
    /// inline as the lengths are: no array to allocate per read).
    let offsets: SlotLengths
    let lengths: SlotLengths

    /// Takes over `storage`, which must come from `UnsafeMutableRawBufferPointer.allocate`.
    init(taking storage: UnsafeMutableRawBufferPointer, offsets: SlotLengths, lengths: SlotLengths) {
        self.storage = storage
        self.offsets = offsets
        self.lengths = lengths
    }

    deinit {
        storage.deallocate()
    }

    /// Whether every slot's value is in the record (none in a value file of its own).
    var holdsEverySlot: Bool { offsets.allSatisfy { $0 >= 0 } }

    /// The record's size in bytes.
    var count: Int { storage.count }

    /// A copy of the whole record (compaction writes it again).
    var bytes: [UInt8] { Array(UnsafeRawBufferPointer(storage)) }

    /// A copy of the `length` bytes from `start`.
    func bytes(from start: Int, count length: Int) -> [UInt8] {
        Array(UnsafeRawBufferPointer(rebasing: storage[start..<(start + length)]))
    }

    /// All of inline slot `slot`, copied once into a `Data`.
    func data(slot: Int) -> Data {
        let start = offsets[slot]
        let length = lengths[slot]
        guard let base = storage.baseAddress, length > 0 else { return Data() }
        return Data(bytes: base + start, count: length)
    }

    /// Inline slot `slot`'s bytes, valid while this object lives.
    func bytes(slot: Int) -> UnsafeRawBufferPointer {
        let start = offsets[slot]
        return UnsafeRawBufferPointer(rebasing: storage[start..<(start + lengths[slot])])
    }

    /// Copies up to `buffer.count` bytes of `slot` from `offset`; fewer only at its end.
    func read(slot: Int, into buffer: UnsafeMutableRawBufferPointer, at offset: Int) -> Int {
        let available = max(0, lengths[slot] - offset)
        let count = min(available, buffer.count)
        guard count > 0 else { return 0 }
        let start = offsets[slot] + offset
        buffer.copyMemory(from: UnsafeRawBufferPointer(rebasing: storage[start..<(start + count)]))
        return count
    }
}
