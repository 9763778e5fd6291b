extension String {
    /// Calls `body` with the string's UTF-8 bytes: in place for a native or small string (no
    /// copy of the string and so no retain and release around the call, as `var s = s;
    /// s.withUTF8` pays), or from a contiguous copy for a bridged one.
    ///
    /// - Complexity: O(1) for a native or small string; O(n) for a bridged one.
    @inlinable
    package func withUTF8Bytes<Result>(_ body: (UnsafeBufferPointer<UInt8>) throws -> Result) rethrows -> Result {
        if let result = try utf8.withContiguousStorageIfAvailable(body) { return result }
        var copy = self
        return try copy.withUTF8(body)
    }
}
