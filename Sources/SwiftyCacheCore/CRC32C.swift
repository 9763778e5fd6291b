/// CRC-32C (Castagnoli, polynomial `0x1EDC6F41`, reflected), the checksum of packed records:
/// it catches every burst error up to 32 bits and torn writes, as in iSCSI, ext4 and LevelDB.
///
/// Computed in software, eight bytes per step with eight 256-entry tables ("slicing by 8"),
/// about 1 GB/s: a 300-byte record costs some 0.3 µs, small beside the `pread` that fetched it.
enum CRC32C {
    /// The checksum of `bytes`, continuing from `crc` (start with `0`).
    ///
    /// - Complexity: O(bytes).
    static func checksum(_ bytes: UnsafeRawBufferPointer, continuing crc: UInt32 = 0) -> UInt32 {
        var crc = ~crc
        guard let base = bytes.baseAddress else { return ~crc }
        let count = bytes.count
        var index = 0
        tables.withUnsafeBufferPointer { table in
            while count - index >= 8 {
                let low = UInt32(littleEndian: base.loadUnaligned(fromByteOffset: index, as: UInt32.self)) ^ crc
                let high = UInt32(littleEndian: base.loadUnaligned(fromByteOffset: index + 4, as: UInt32.self))
                crc =
                    table[7 &* 256 &+ Int(low & 0xFF)] ^ table[6 &* 256 &+ Int((low >> 8) & 0xFF)]
                    ^ table[5 &* 256 &+ Int((low >> 16) & 0xFF)] ^ table[4 &* 256 &+ Int(low >> 24)]
                    ^ table[3 &* 256 &+ Int(high & 0xFF)] ^ table[2 &* 256 &+ Int((high >> 8) & 0xFF)]
                    ^ table[1 &* 256 &+ Int((high >> 16) & 0xFF)] ^ table[Int(high >> 24)]
                index &+= 8
            }
            while index < count {
                let byte = base.load(fromByteOffset: index, as: UInt8.self)
                crc = table[Int((crc ^ UInt32(byte)) & 0xFF)] ^ (crc >> 8)
                index &+= 1
            }
        }
        return ~crc
    }

    /// The checksum of `bytes`.
    static func checksum(_ bytes: some Sequence<UInt8>) -> UInt32 {
        let array = Array(bytes)
        return array.withUnsafeBytes { checksum($0) }
    }

    /// Table `k` (at `k * 256`) maps a byte to its contribution `k` bytes further on.
    private static let tables: [UInt32] = {
        var tables = [UInt32](repeating: 0, count: 8 * 256)
        for byte in 0..<256 {
            var crc = UInt32(byte)
            for _ in 0..<8 { crc = (crc & 1) != 0 ? (crc >> 1) ^ 0x82F6_3B78 : crc >> 1 }
            tables[byte] = crc
        }
        for byte in 0..<256 {
            var crc = tables[byte]
            for slice in 1..<8 {
                crc = tables[Int(crc & 0xFF)] ^ (crc >> 8)
                tables[slice * 256 + byte] = crc
            }
        }
        return tables
    }()
}
