/// The bytes of every key in the index that its record does not hold (see ``InlineKey``), back
/// to back in one array: no allocation per key.
///
/// Each key is preceded by its length as an unsigned LEB128 varint (one byte below 128, at
/// most three for the 64 KiB a journal key may hold), so that the arena can be walked from its
/// start without the entries that own the keys. A removed key's bytes stay until
/// ``reclaim(owner:relocate:)`` slides the live ones down over them, in place, when they have become a
/// quarter of the arena; the owner of each live key is told its key's new offset.
///
///     offset  0: 02 'k' '1'       a key of two bytes, "k1"
///     offset  3: 03 'a' 'b' 'c'   "abc"
///
/// Offsets are those of the key's first byte (past its length).
///
/// - Complexity: append O(key) amortized; reclaiming O(arena), run after the removed bytes
///   reach a quarter of it, so O(1) amortized per removed byte.
struct KeyArena {
    /// The arena; its length bytes and keys.
    private(set) var bytes: [UInt8] = []
    /// Bytes (lengths included) of keys no longer used.
    private(set) var garbage = 0
    /// A reserved arena's capacity, faulted in just ahead of the keys appended.
    private var faultAhead = FaultAhead()

    init() {}

    /// An arena of `bytes` laid out as ``append(_:)`` lays keys out, none of them garbage.
    init(bytes: [UInt8]) { self.bytes = bytes }

    /// Keys may not be longer than this (the journal's allowance, 64 KiB, fits).
    static let maximumKeyLength = (1 << 21) - 1

    /// The arena's size in bytes, live and garbage.
    var count: Int { bytes.count }
    var capacity: Int { bytes.capacity }

    /// Makes room for `capacity` bytes of keys about to be appended in bulk, faulted in as they
    /// come (``FaultAhead``).
    mutating func reserveCapacity(_ capacity: Int) { faultAhead.reserve(&bytes, capacity: capacity) }

    /// Appends `key` and returns the offset of its first byte.
    ///
    /// - Complexity: O(key) amortized.
    mutating func append(_ key: UnsafeBufferPointer<UInt8>) -> Int {
        var length = key.count
        while length >= 0x80 {
            bytes.append(UInt8(truncatingIfNeeded: length) | 0x80)
            length >>= 7
        }
        bytes.append(UInt8(length))
        let offset = bytes.count
        bytes.append(contentsOf: key)
        faultAhead.advance(&bytes)
        return offset
    }

    /// Calls `body` with the `length` key bytes at `offset`.
    @inline(__always)
    func withKey<Result>(at offset: Int, length: Int, _ body: (UnsafeBufferPointer<UInt8>) -> Result) -> Result {
        bytes.withUnsafeBufferPointer { all in
            body(UnsafeBufferPointer(rebasing: all[offset..<(offset &+ length)]))
        }
    }

    /// Whether the `length` key bytes at `offset` are `key`'s.
    @inline(__always)
    func keyEquals(at offset: Int, length: Int, _ key: UnsafeBufferPointer<UInt8>) -> Bool {
        guard length == key.count else { return false }
        return withKey(at: offset, length: length) { stored in
            guard let storedBase = stored.baseAddress, let keyBase = key.baseAddress else { return length == 0 }
            return Self.bytesEqual(UnsafeRawPointer(storedBase), UnsafeRawPointer(keyBase), count: length)
        }
    }

    /// Counts the key of `length` bytes as garbage.
    mutating func release(length: Int) {
        garbage &+= Self.prefixSize(length) &+ length
    }

    /// Whether removed keys take a quarter of the arena (and more than 64 KiB): then
    /// ``reclaim(owner:relocate:)`` pays for itself.
    var needsCompaction: Bool { garbage > 1 << 16 && garbage &* 4 > bytes.count }

    /// Slides every live key down over the garbage, in place, and frees the space left at the
    /// end. `owner(offset, key)` names the user of the key at `offset`, `nil` for none (the
    /// key is garbage); the arena calls `relocate(owner, newOffset)` once a live key has moved.
    ///
    /// - Complexity: O(arena).
    mutating func reclaim(
        owner: (Int, UnsafeBufferPointer<UInt8>) -> Int?, relocate: (_ owner: Int, _ newOffset: Int) -> Void
    ) {
        var read = 0
        var write = 0
        let end = bytes.count
        while read < end {
            let start = read
            var length = 0
            var shift = 0
            while read < end {
                let byte = bytes[read]
                read &+= 1
                length |= Int(byte & 0x7F) << shift
                shift &+= 7
                if byte & 0x80 == 0 || shift > 21 { break }
            }
            let keyEnd = min(end, read &+ length)
            if let found = withKey(at: read, length: keyEnd &- read, { owner(read, $0) }) {
                let size = keyEnd &- start
                if write != start {
                    bytes.withUnsafeMutableBytes { raw in
                        guard let base = raw.baseAddress else { return }
                        // `copyMemory` allows the two ranges to overlap (memmove).
                        (base + write).copyMemory(from: base + start, byteCount: size)
                    }
                }
                relocate(found, write &+ (read &- start))
                write &+= size
            }
            read = keyEnd
        }
        bytes.removeLast(bytes.count &- write)
        garbage = 0
    }

    /// Forgets every key.
    mutating func removeAll() {
        bytes = []
        garbage = 0
    }

    /// Whether `count` bytes at `left` and `right` are equal, eight at a time.
    @inline(__always)
    static func bytesEqual(_ left: UnsafeRawPointer, _ right: UnsafeRawPointer, count: Int) -> Bool {
        var index = 0
        while count &- index >= 8 {
            guard
                left.loadUnaligned(fromByteOffset: index, as: UInt64.self)
                    == right.loadUnaligned(fromByteOffset: index, as: UInt64.self)
            else { return false }
            index &+= 8
        }
        while index < count {
            guard left.load(fromByteOffset: index, as: UInt8.self) == right.load(fromByteOffset: index, as: UInt8.self)
            else { return false }
            index &+= 1
        }
        return true
    }

    /// The bytes the varint of `length` takes.
    static func prefixSize(_ length: Int) -> Int {
        length < 0x80 ? 1 : length < 0x4000 ? 2 : 3
    }
}
