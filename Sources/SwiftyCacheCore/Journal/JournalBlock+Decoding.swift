extension JournalBlock {
    /// The entries of one block, decoded into buffers that are reused from block to block: the
    /// replay of a rewritten journal decodes millions of entries, so nothing here allocates per
    /// entry, and a payload without escapes is read where it lies.
    struct Decoded {
        /// The keys' bytes back to back; hex keys spelled out.
        private var keys: [UInt8] = []
        private var keyEnds: [Int] = []
        private(set) var lengths: [SlotLengths] = []
        private(set) var locations: [ValueLocation] = []
        /// The payload, when it had escapes to undo.
        private var unescaped: [UInt8] = []

        var count: Int { keyEnds.count }
        /// The bytes of the line body the entries came from.
        private(set) var encodedBytes = 0
        /// The bytes of all the keys, spelled out.
        var keyByteCount: Int { keys.count }

        init() {
            keys.reserveCapacity(maximumEntries * 64)
            keyEnds.reserveCapacity(maximumEntries)
            lengths.reserveCapacity(maximumEntries)
            locations.reserveCapacity(maximumEntries)
        }

        /// Decodes the block whose line body (after the verb, before the check) is `body`.
        /// Returns `false`, holding nothing, unless every byte decodes into whole entries with
        /// replayable keys, `valueCount` lengths that add up within an `Int`, and a location.
        ///
        /// - Complexity: O(body).
        mutating func decode(_ body: Slice<UnsafeBufferPointer<UInt8>>, valueCount: Int) -> Bool {
            removeAll()
            guard valueCount >= 0, valueCount <= 1 << 20 else { return false }
            let line = UnsafeBufferPointer(rebasing: body)
            encodedBytes = line.count
            let decoded: Bool
            if ByteSearch.firstIndex(of: escape, in: UnsafeRawBufferPointer(line)) != nil {
                guard unescape(line) else { return false }
                let payload = unescaped
                decoded = payload.withUnsafeBufferPointer { decodeEntries($0, valueCount: valueCount) }
            } else {
                decoded = decodeEntries(line, valueCount: valueCount)
            }
            guard decoded, count > 0 else {
                removeAll()
                return false
            }
            return true
        }

        /// The lengths and location of entry `index` (a position ``forEachKey(_:)`` passes).
        func entry(_ index: Int) -> (lengths: SlotLengths, location: ValueLocation) {
            (lengths[index], locations[index])
        }

        /// Calls `body` with each entry's key, lengths and location, in order.
        func forEachEntry(_ body: (UnsafeBufferPointer<UInt8>, SlotLengths, ValueLocation) -> Void) {
            forEachKey { index, key in body(key, lengths[index], locations[index]) }
        }

        /// Calls `body` with each entry's position and key, in order.
        func forEachKey(_ body: (Int, UnsafeBufferPointer<UInt8>) -> Void) {
            keys.withUnsafeBufferPointer { all in
                var start = 0
                for index in 0..<keyEnds.count {
                    body(index, UnsafeBufferPointer(rebasing: all[start..<keyEnds[index]]))
                    start = keyEnds[index]
                }
            }
        }

        private mutating func removeAll() {
            keys.removeAll(keepingCapacity: true)
            keyEnds.removeAll(keepingCapacity: true)
            lengths.removeAll(keepingCapacity: true)
            locations.removeAll(keepingCapacity: true)
        }

        /// Undoes the escapes of `line` into ``unescaped``, copying the runs between them whole.
        private mutating func unescape(_ line: UnsafeBufferPointer<UInt8>) -> Bool {
            unescaped.removeAll(keepingCapacity: true)
            let raw = UnsafeRawBufferPointer(line)
            var index = 0
            while index < line.count {
                let run = ByteSearch.firstIndex(of: escape, in: raw, from: index) ?? line.count
                unescaped.append(contentsOf: UnsafeBufferPointer(rebasing: line[index..<run]))
                guard run < line.count else { return true }
                guard run &+ 1 < line.count else { return false }
                switch line[run &+ 1] {
                case 0x01: unescaped.append(UInt8(ascii: "\n"))
                case 0x02: unescaped.append(escape)
                default: return false
                }
                index = run &+ 2
            }
            return true
        }

        private mutating func decodeEntries(_ bytes: UnsafeBufferPointer<UInt8>, valueCount: Int) -> Bool {
            var reader = Reader(bytes: bytes)
            while !reader.isAtEnd {
                guard keyEnds.count < maximumEntries, let head = reader.byte() else { return false }
                let stored = Int(head & 0x7F)
                guard stored > 0, let keyBytes = reader.bytes(stored) else { return false }
                if head & 0x80 != 0 {
                    // Hex digits are always a replayable key. Spelled out in a buffer on the
                    // stack, then appended whole.
                    var spelled: (UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64) = (
                        0, 0, 0, 0, 0, 0, 0, 0
                    )
                    withUnsafeMutableBytes(of: &spelled) { buffer in
                        var start = 0
                        while start < keyBytes.count {
                            let end = min(keyBytes.count, start &+ buffer.count / 2)
                            for index in start..<end {
                                let byte = keyBytes[index]
                                buffer[2 &* (index &- start)] = HexDigits.digit(byte >> 4)
                                buffer[2 &* (index &- start) &+ 1] = HexDigits.digit(byte & 0xF)
                            }
                            keys.append(contentsOf: UnsafeRawBufferPointer(rebasing: buffer[0..<(2 &* (end &- start))]))
                            start = end
                        }
                    }
                } else {
                    guard CacheFileName.isReplayableKey(keyBytes[...]) else { return false }
                    keys.append(contentsOf: keyBytes)
                }
                guard let entryLengths = reader.lengths(valueCount), entryLengths.total != nil,
                    let segment = reader.varint().flatMap({ UInt32(exactly: $0) }),
                    let offset = reader.varint().flatMap({ Int64(exactly: $0) })
                else { return false }
                keyEnds.append(keys.count)
                lengths.append(entryLengths)
                locations.append(ValueLocation(segment: segment, offset: offset))
            }
            return true
        }
    }

    /// Reads a payload's fields, never past its end.
    private struct Reader {
        let bytes: UnsafeBufferPointer<UInt8>
        var position = 0

        var isAtEnd: Bool { position >= bytes.count }

        mutating func byte() -> UInt8? {
            guard position < bytes.count else { return nil }
            defer { position &+= 1 }
            return bytes[position]
        }

        mutating func bytes(_ count: Int) -> UnsafeBufferPointer<UInt8>? {
            guard count <= bytes.count &- position else { return nil }
            defer { position &+= count }
            return UnsafeBufferPointer(rebasing: bytes[position..<(position &+ count)])
        }

        mutating func varint() -> UInt64? { LEB128.read(UnsafeRawBufferPointer(bytes), at: &position) }

        mutating func length() -> Int? { varint().flatMap { Int(exactly: $0) } }

        /// `count` lengths, inline for one or two slots: nothing allocated per entry.
        mutating func lengths(_ count: Int) -> SlotLengths? { SlotLengths.reading(count) { length() } }
    }
}
