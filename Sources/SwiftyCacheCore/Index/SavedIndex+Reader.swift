extension SavedIndex {
    struct DecodedEntry {
        /// The key's bytes, in the saved index.
        var key: UnsafeBufferPointer<UInt8>
        var lengths: SlotLengths
        var location: ValueLocation
    }

    /// Reads a saved index's body through a buffer of bounded size: refilled from the file as it is
    /// consumed, the bytes it reads hashed on the way for the checksum at the end.
    struct Reader {
        let region: FileRegion
        /// The bytes before the checksum.
        let bodyCount: Int
        private let buffer: UnsafeMutableRawBufferPointer
        /// The buffer's valid bytes.
        private var filled = 0
        /// The next byte to parse in the buffer.
        private var position = 0
        /// The next byte of the body to read from the file.
        private var fileOffset = 0
        private var hasher = XXHash64.Stream()

        init(region: FileRegion, bodyCount: Int, capacity: Int) {
            self.region = region
            self.bodyCount = bodyCount
            buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: capacity, alignment: 8)
        }

        func deallocate() { buffer.deallocate() }

        private var bytes: UnsafeRawBufferPointer { UnsafeRawBufferPointer(rebasing: buffer[0..<filled]) }

        /// Whether every byte of the body was parsed.
        var isAtEnd: Bool { position == filled && fileOffset == bodyCount }

        /// The bytes of the body parsed so far.
        var consumed: Int { fileOffset &- (filled &- position) }

        /// Fills `destination` with the next bytes of the body (those in the buffer first, then
        /// straight from the file, hashed on the way); `false` when the body ends first or the
        /// file could not be read.
        mutating func read(into destination: UnsafeMutableRawBufferPointer) -> Bool {
            let buffered = min(filled &- position, destination.count)
            if buffered > 0, let target = destination.baseAddress, let base = buffer.baseAddress {
                target.copyMemory(from: base + position, byteCount: buffered)
                position &+= buffered
            }
            let rest = destination.count &- buffered
            guard rest > 0 else { return true }
            guard rest <= bodyCount &- fileOffset else { return false }
            let target = UnsafeMutableRawBufferPointer(rebasing: destination[buffered...])
            guard region.read(into: target, at: fileOffset) == rest else { return false }
            hasher.update(UnsafeRawBufferPointer(target))
            fileOffset &+= rest
            return true
        }

        /// The next eight bytes as a little-endian integer.
        mutating func word() -> UInt64? {
            guard filled &- position >= 8 else { return nil }
            let value = buffer.loadUnaligned(fromByteOffset: position, as: UInt64.self)
            position &+= 8
            return UInt64(littleEndian: value)
        }

        /// Calls `body` with the next `count` bytes, which ``ensure(_:)`` made available, and
        /// consumes them.
        @inline(__always)
        mutating func take<Result>(_ count: Int, _ body: (UnsafeRawBufferPointer) -> Result) -> Result? {
            guard filled &- position >= count, let base = buffer.baseAddress else { return nil }
            let result = body(UnsafeRawBufferPointer(start: base + position, count: count))
            position &+= count
            return result
        }

        /// Makes `count` bytes available to parse if the body has them, moving what is left to
        /// the buffer's start and reading more. `false` when the file could not be read.
        mutating func ensure(_ count: Int) -> Bool {
            guard filled &- position < count, fileOffset < bodyCount else { return true }
            let left = filled &- position
            if left > 0, position > 0, let base = buffer.baseAddress {
                base.copyMemory(from: base + position, byteCount: left)
            }
            filled = left
            position = 0
            let want = min(buffer.count &- filled, bodyCount &- fileOffset)
            let read = region.read(
                into: UnsafeMutableRawBufferPointer(rebasing: buffer[filled..<(filled &+ want)]), at: fileOffset)
            guard read == want else { return false }
            hasher.update(UnsafeRawBufferPointer(rebasing: buffer[filled..<(filled &+ read)]))
            filled &+= read
            fileOffset &+= read
            return true
        }

        /// Whether the checksum after the body is the body's XXH64.
        func checksumMatches() -> Bool {
            var stored: UInt64 = 0
            let read = withUnsafeMutableBytes(of: &stored) { region.read(into: $0, at: bodyCount) }
            return read == 8 && UInt64(littleEndian: stored) == hasher.finalize()
        }

        /// Consumes `expected` if the bytes are it.
        mutating func skip(_ expected: [UInt8]) -> Bool {
            guard filled &- position >= expected.count,
                bytes[position..<(position &+ expected.count)].elementsEqual(expected)
            else { return false }
            position &+= expected.count
            return true
        }

        @inline(__always)
        mutating func byte() -> UInt8? {
            guard position < filled else { return nil }
            let value = buffer.load(fromByteOffset: position, as: UInt8.self)
            position &+= 1
            return value
        }

        @inline(__always)
        mutating func varint() -> UInt64? { LEB128.read(bytes, at: &position) }

        @inline(__always)
        mutating func length() -> Int? { varint().flatMap { Int(exactly: $0) } }

        mutating func entry(valueCount: Int, storesLocations: Bool) -> DecodedEntry? {
            guard let keyLength = byte().map(Int.init), keyLength > 0, position + keyLength <= filled,
                let base = buffer.baseAddress
            else { return nil }
            let keyBytes = UnsafeBufferPointer(
                start: (base + position).assumingMemoryBound(to: UInt8.self), count: keyLength)
            guard CacheFileName.isReplayableKey(keyBytes[...]) else { return nil }
            let key = keyBytes
            position += keyLength
            guard let lengths = SlotLengths.reading(valueCount, { length() }) else { return nil }
            var location = ValueLocation.none
            if storesLocations {
                guard let segment = varint().flatMap({ UInt32(exactly: $0) }),
                    let offset = varint().flatMap({ Int64(exactly: $0) })
                else { return nil }
                location = ValueLocation(segment: segment, offset: offset)
            }
            return DecodedEntry(key: key, lengths: lengths, location: location)
        }
    }
}
