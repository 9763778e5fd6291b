/// SHA-256 (FIPS 180-4), for hashing cache keys into file names. CryptoKit is not available on
/// Linux and the package takes no dependencies, so it is written here; the tests check it
/// against the NIST vectors.
///
/// Whole 64-byte blocks are compressed straight from the input; only a partial block is copied.
package struct SHA256: Sendable {
    private var state: (UInt32, UInt32, UInt32, UInt32, UInt32, UInt32, UInt32, UInt32) = (
        0x6a09_e667, 0xbb67_ae85, 0x3c6e_f372, 0xa54f_f53a, 0x510e_527f, 0x9b05_688c, 0x1f83_d9ab, 0x5be0_cd19
    )
    /// Bytes of an unfinished block.
    private var pending: [UInt8] = []
    private var totalLength: UInt64 = 0

    package init() {}

    /// Feeds more bytes.
    package mutating func update(_ bytes: some Sequence<UInt8>) {
        if let done: Void = bytes.withContiguousStorageIfAvailable({ update(UnsafeRawBufferPointer($0)) }) {
            return done
        }
        let copy = Array(bytes)
        copy.withUnsafeBytes { update($0) }
    }

    /// Feeds more bytes from memory.
    package mutating func update(_ buffer: UnsafeRawBufferPointer) {
        totalLength &+= UInt64(buffer.count)
        var offset = 0
        if !pending.isEmpty {
            let take = min(64 - pending.count, buffer.count)
            pending.append(contentsOf: buffer[0..<take])
            offset = take
            guard pending.count == 64 else { return }
            pending.withUnsafeBytes { compress($0) }
            pending.removeAll(keepingCapacity: true)
        }
        while buffer.count - offset >= 64 {
            compress(UnsafeRawBufferPointer(rebasing: buffer[offset..<offset + 64]))
            offset += 64
        }
        pending.append(contentsOf: buffer[offset...])
    }

    /// The 32-byte digest of everything fed so far.
    package consuming func finalize() -> [UInt8] {
        finish()
        var digest: [UInt8] = []
        digest.reserveCapacity(32)
        forEachDigestByte { digest.append($0) }
        return digest
    }

    /// Pads the message and compresses the last block or two, in stack memory.
    private mutating func finish() {
        let pending = self.pending
        pending.withUnsafeBytes { finish(tail: $0) }
        self.pending.removeAll()
    }

    /// Pads `tail`, the bytes after the last whole block (fewer than 64), and compresses it.
    private mutating func finish(tail bytes: UnsafeRawBufferPointer) {
        let bitLength = totalLength &* 8
        let tailLength = bytes.count < 56 ? 64 : 128
        withUnsafeTemporaryAllocation(byteCount: tailLength, alignment: 8) { tail in
            tail.initializeMemory(as: UInt8.self, repeating: 0)
            if bytes.count > 0 { tail.copyMemory(from: bytes) }
            tail[bytes.count] = 0x80
            for i in 0..<8 { tail[tailLength - 1 - i] = UInt8(truncatingIfNeeded: bitLength >> UInt64(8 * i)) }
            for start in stride(from: 0, to: tailLength, by: 64) {
                compress(UnsafeRawBufferPointer(rebasing: tail[start..<start + 64]))
            }
        }
    }

    /// Hashes contiguous bytes in one pass, with no buffering: whole blocks straight from
    /// `buffer`, the tail in stack memory.
    private static func oneShot(_ buffer: UnsafeRawBufferPointer) -> SHA256 {
        var hasher = SHA256()
        hasher.totalLength = UInt64(buffer.count)
        var offset = 0
        while buffer.count - offset >= 64 {
            hasher.compress(UnsafeRawBufferPointer(rebasing: buffer[offset..<offset + 64]))
            offset += 64
        }
        hasher.finish(tail: UnsafeRawBufferPointer(rebasing: buffer[offset...]))
        return hasher
    }

    /// A finished hasher for `bytes`: in one pass when they are contiguous.
    private static func finished(_ bytes: some Sequence<UInt8>) -> SHA256 {
        if let hasher = bytes.withContiguousStorageIfAvailable({ oneShot(UnsafeRawBufferPointer($0)) }) {
            return hasher
        }
        var hasher = SHA256()
        hasher.update(bytes)
        hasher.finish()
        return hasher
    }

    private func forEachDigestByte(_ body: (UInt8) -> Void) {
        withUnsafeBytes(of: state) { words in
            for word in words.bindMemory(to: UInt32.self) {
                for shift in stride(from: 24, through: 0, by: -8) {
                    body(UInt8(truncatingIfNeeded: word >> UInt32(shift)))
                }
            }
        }
    }

    /// The digest of `bytes`.
    package static func hash(_ bytes: some Sequence<UInt8>) -> [UInt8] {
        let hasher = finished(bytes)
        var digest: [UInt8] = []
        digest.reserveCapacity(32)
        hasher.forEachDigestByte { digest.append($0) }
        return digest
    }

    /// The digest of `bytes` as 64 lowercase hexadecimal digits.
    package static func hexDigest(_ bytes: some Sequence<UInt8>) -> String {
        let hasher = finished(bytes)
        return String(unsafeUninitializedCapacity: 64) { text in
            let digits: StaticString = "0123456789abcdef"
            digits.withUTF8Buffer { digits in
                var i = 0
                hasher.forEachDigestByte { byte in
                    text[i] = digits[Int(byte >> 4)]
                    text[i + 1] = digits[Int(byte & 0x0f)]
                    i += 2
                }
            }
            return 64
        }
    }

    private static let k: [UInt32] = [
        0x428a_2f98, 0x7137_4491, 0xb5c0_fbcf, 0xe9b5_dba5, 0x3956_c25b, 0x59f1_11f1, 0x923f_82a4, 0xab1c_5ed5,
        0xd807_aa98, 0x1283_5b01, 0x2431_85be, 0x550c_7dc3, 0x72be_5d74, 0x80de_b1fe, 0x9bdc_06a7, 0xc19b_f174,
        0xe49b_69c1, 0xefbe_4786, 0x0fc1_9dc6, 0x240c_a1cc, 0x2de9_2c6f, 0x4a74_84aa, 0x5cb0_a9dc, 0x76f9_88da,
        0x983e_5152, 0xa831_c66d, 0xb003_27c8, 0xbf59_7fc7, 0xc6e0_0bf3, 0xd5a7_9147, 0x06ca_6351, 0x1429_2967,
        0x27b7_0a85, 0x2e1b_2138, 0x4d2c_6dfc, 0x5338_0d13, 0x650a_7354, 0x766a_0abb, 0x81c2_c92e, 0x9272_2c85,
        0xa2bf_e8a1, 0xa81a_664b, 0xc24b_8b70, 0xc76c_51a3, 0xd192_e819, 0xd699_0624, 0xf40e_3585, 0x106a_a070,
        0x19a4_c116, 0x1e37_6c08, 0x2748_774c, 0x34b0_bcb5, 0x391c_0cb3, 0x4ed8_aa4a, 0x5b9c_ca4f, 0x682e_6ff3,
        0x748f_82ee, 0x78a5_636f, 0x84c8_7814, 0x8cc7_0208, 0x90be_fffa, 0xa450_6ceb, 0xbef9_a3f7, 0xc671_78f2,
    ]

    /// Compresses one 64-byte block into the state.
    private mutating func compress(_ block: UnsafeRawBufferPointer) {
        withUnsafeTemporaryAllocation(of: UInt32.self, capacity: 64) { w in
            for t in 0..<16 {
                w[t] = UInt32(bigEndian: block.loadUnaligned(fromByteOffset: 4 * t, as: UInt32.self))
            }
            for t in 16..<64 {
                let s0 = w[t - 15].rotatedRight(7) ^ w[t - 15].rotatedRight(18) ^ (w[t - 15] &>> 3)
                let s1 = w[t - 2].rotatedRight(17) ^ w[t - 2].rotatedRight(19) ^ (w[t - 2] &>> 10)
                w[t] = w[t - 16] &+ s0 &+ w[t - 7] &+ s1
            }
            var (a, b, c, d, e, f, g, h) = state
            Self.k.withUnsafeBufferPointer { k in
                for t in 0..<64 {
                    let s1 = e.rotatedRight(6) ^ e.rotatedRight(11) ^ e.rotatedRight(25)
                    let choice = (e & f) ^ (~e & g)
                    let temp1 = h &+ s1 &+ choice &+ k[t] &+ w[t]
                    let s0 = a.rotatedRight(2) ^ a.rotatedRight(13) ^ a.rotatedRight(22)
                    let majority = (a & b) ^ (a & c) ^ (b & c)
                    (h, g, f, e, d, c, b, a) = (g, f, e, d &+ temp1, c, b, a, temp1 &+ s0 &+ majority)
                }
            }
            state = (
                state.0 &+ a, state.1 &+ b, state.2 &+ c, state.3 &+ d, state.4 &+ e, state.5 &+ f, state.6 &+ g,
                state.7 &+ h
            )
        }
    }
}

extension UInt32 {
    @inline(__always)
    fileprivate func rotatedRight(_ count: UInt32) -> UInt32 {
        (self &>> count) | (self &<< (32 &- count))
    }
}
