/// XXH64, the 64-bit xxHash of Yann Collet (as in zstd and the LZ4 frame format), with seed 0:
/// the checksum of packed records.
///
/// It reads 32 bytes per step with four independent multiply-rotate lanes, several GB/s in
/// plain Swift, where a table-driven CRC-32 managed a quarter of that and was a quarter of a
/// packed get's time (docs/PERFORMANCE.md). A torn write or a flipped bit changes the value
/// but with probability 2⁻³² for the 32 bits a record keeps.
package enum XXHash64 {
    static let prime1: UInt64 = 0x9E37_79B1_85EB_CA87
    static let prime2: UInt64 = 0xC2B2_AE3D_27D4_EB4F
    static let prime3: UInt64 = 0x1656_67B1_9E37_79F9
    static let prime4: UInt64 = 0x85EB_CA77_C2B2_AE63
    static let prime5: UInt64 = 0x27D4_EB2F_1656_67C5

    /// The hash of `bytes` with `seed` (0 for the reference values).
    ///
    /// - Complexity: O(bytes).
    package static func hash(_ bytes: UnsafeRawBufferPointer, seed: UInt64 = 0) -> UInt64 {
        guard let base = bytes.baseAddress else { return finish(seed &+ prime5, base: nil, from: 0, to: 0, length: 0) }
        let count = bytes.count
        var index = 0
        var hash: UInt64
        if count >= 32 {
            var v1 = seed &+ prime1 &+ prime2
            var v2 = seed &+ prime2
            var v3 = seed
            var v4 = seed &- prime1
            while count &- index >= 32 {
                v1 = round(v1, read64(base, index))
                v2 = round(v2, read64(base, index &+ 8))
                v3 = round(v3, read64(base, index &+ 16))
                v4 = round(v4, read64(base, index &+ 24))
                index &+= 32
            }
            hash = converge(v1, v2, v3, v4)
        } else {
            hash = seed &+ prime5
        }
        return finish(hash, base: base, from: index, to: count, length: count)
    }

    /// The hash of `bytes` with seed 0.
    package static func hash(_ bytes: [UInt8]) -> UInt64 { bytes.withUnsafeBytes { hash($0) } }

    static func finish(
        _ start: UInt64, base: UnsafeRawPointer?, from: Int, to end: Int, length: Int
    ) -> UInt64 {
        var hash = start &+ UInt64(truncatingIfNeeded: length)
        var index = from
        if let base {
            while end &- index >= 8 {
                hash ^= round(0, read64(base, index))
                hash = rotate(hash, 27) &* prime1 &+ prime4
                index &+= 8
            }
            if end &- index >= 4 {
                hash ^=
                    UInt64(UInt32(littleEndian: base.loadUnaligned(fromByteOffset: index, as: UInt32.self))) &* prime1
                hash = rotate(hash, 23) &* prime2 &+ prime3
                index &+= 4
            }
            while index < end {
                hash ^= UInt64(base.load(fromByteOffset: index, as: UInt8.self)) &* prime5
                hash = rotate(hash, 11) &* prime1
                index &+= 1
            }
        }
        hash ^= hash >> 33
        hash = hash &* prime2
        hash ^= hash >> 29
        hash = hash &* prime3
        hash ^= hash >> 32
        return hash
    }

    /// The four lanes of 32-byte stripes folded into one value.
    @inline(__always)
    static func converge(_ v1: UInt64, _ v2: UInt64, _ v3: UInt64, _ v4: UInt64) -> UInt64 {
        var hash = rotate(v1, 1) &+ rotate(v2, 7) &+ rotate(v3, 12) &+ rotate(v4, 18)
        hash = merge(hash, v1)
        hash = merge(hash, v2)
        hash = merge(hash, v3)
        return merge(hash, v4)
    }

    @inline(__always)
    static func read64(_ base: UnsafeRawPointer, _ offset: Int) -> UInt64 {
        UInt64(littleEndian: base.loadUnaligned(fromByteOffset: offset, as: UInt64.self))
    }

    @inline(__always)
    static func rotate(_ value: UInt64, _ count: UInt64) -> UInt64 {
        (value << count) | (value >> (64 &- count))
    }

    @inline(__always)
    static func round(_ accumulator: UInt64, _ input: UInt64) -> UInt64 {
        rotate(accumulator &+ input &* prime2, 31) &* prime1
    }

    @inline(__always)
    static func merge(_ accumulator: UInt64, _ value: UInt64) -> UInt64 {
        (accumulator ^ round(0, value)) &* prime1 &+ prime4
    }
}
