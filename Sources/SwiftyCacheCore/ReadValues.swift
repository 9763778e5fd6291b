#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif

/// Every slot of an entry as one read found them: in packed storage, the record itself, read
/// and checked once, whose bytes the caller looks at where they are; otherwise one `Data` per
/// slot. For the layer above, which parses a slot where it is and hands another to its decoder
/// with no copy of the record (``DiskLRUCache/readValues(forKey:)``; the decoder itself copies
/// the payload it decodes, see `ObjectCacheFormat.decode`).
@usableFromInline
package struct ReadValues: Sendable {
    private enum Source: Sendable {
        case record(RecordBytes)
        case slots([Data])
    }

    private let source: Source

    /// The entry's slot count.
    @usableFromInline package let count: Int

    init(record: RecordBytes, count: Int) {
        self.source = .record(record)
        self.count = count
    }

    /// Slots read as `Data` (a value file's, or any other read's).
    package init(_ slots: [Data]) {
        self.source = .slots(slots)
        self.count = slots.count
    }

    /// Runs `body` on the bytes of `slot`, which are valid only during the call.
    ///
    /// - Complexity: O(1): no copy.
    @usableFromInline
    package func withBytes<Result>(ofSlot slot: Int, _ body: (UnsafeRawBufferPointer) throws -> Result) rethrows
        -> Result
    {
        switch source {
        case .record(let record): return try withExtendedLifetime(record) { try body(record.bytes(slot: slot)) }
        case .slots(let slots): return try slots[slot].withUnsafeBytes(body)
        }
    }

    /// The length of `slot` in bytes.
    @usableFromInline
    package func length(ofSlot slot: Int) -> Int {
        switch source {
        case .record(let record): record.lengths[slot]
        case .slots(let slots): slots[slot].count
        }
    }

    /// A copy of `slot`'s bytes.
    @usableFromInline
    package func data(ofSlot slot: Int) -> Data {
        switch source {
        case .record(let record): record.data(slot: slot)
        case .slots(let slots): slots[slot]
        }
    }
}
