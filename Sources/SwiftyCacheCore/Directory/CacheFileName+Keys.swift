/// The keys a cache may hold, whoever wrote them (this library, the Java library, a crafted
/// journal): the rule that keeps every value file's name inside the directory.
extension CacheFileName {
    /// Whether `key` can be replayed: printable ASCII without a space or a slash, not `.` or
    /// `..`, so that `key.N` always names a file inside the cache directory.
    ///
    /// - Complexity: O(key), eight bytes per step (it runs once per line replayed and per entry
    ///   of a saved index loaded).
    static func isReplayableKey(_ key: Slice<UnsafeBufferPointer<UInt8>>) -> Bool {
        guard !key.isEmpty, let base = key.base.baseAddress else { return false }
        let start = UnsafeRawPointer(base + key.startIndex)
        let count = key.count
        var index = 0
        while count &- index >= 8 {
            guard isReplayableWord(UInt64(littleEndian: start.loadUnaligned(fromByteOffset: index, as: UInt64.self)))
            else { return false }
            index &+= 8
        }
        while index < count {
            let byte = start.load(fromByteOffset: index, as: UInt8.self)
            guard byte > 0x20 && byte < 0x7F && byte != UInt8(ascii: "/") else { return false }
            index &+= 1
        }
        if count <= 2 && key.allSatisfy({ $0 == UInt8(ascii: ".") }) { return false }
        return true
    }

    /// Whether each of the eight bytes of `word` is printable ASCII other than a space and `/`
    /// (0x21 to 0x7E, not 0x2F), by the bit tricks of "Bit Twiddling Hacks": a byte below 0x21
    /// borrows into its top bit when 0x21 is subtracted, one above 0x7E carries into it when 1
    /// is added, and `/` is the zero byte of `word ^ 0x2F2F…`.
    @inline(__always)
    static func isReplayableWord(_ word: UInt64) -> Bool {
        let ones: UInt64 = 0x0101_0101_0101_0101
        let highs: UInt64 = 0x8080_8080_8080_8080
        let below = (word &- ones &* 0x21) & ~word & highs
        let above = ((word &+ ones) | word) & highs
        let slashes = word ^ (ones &* 0x2F)
        let slash = (slashes &- ones) & ~slashes & highs
        return below | above | slash == 0
    }
}
