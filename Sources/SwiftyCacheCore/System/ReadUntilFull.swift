/// Fills `buffer` by calling `read` with the part still empty and the count already filled,
/// until the buffer is full, `read` returns 0 (the end of the data) or `nil` (the caller's
/// "stop": a read that would wait for the disk). The one read-until-full loop of the engine:
/// positioned reads return short counts, and every reader must go on after one.
///
/// - Returns: The bytes filled, fewer than `buffer.count` only at the end; `nil` if `read`
///   stopped.
/// - Complexity: One call of `read` per short read.
@inline(__always)
func readUntilFull<Failure: Error>(
    _ buffer: UnsafeMutableRawBufferPointer,
    _ read: (_ rest: UnsafeMutableRawBufferPointer, _ filled: Int) throws(Failure) -> Int?
) throws(Failure) -> Int? {
    var filled = 0
    while filled < buffer.count {
        guard let count = try read(UnsafeMutableRawBufferPointer(rebasing: buffer[filled...]), filled) else {
            return nil
        }
        guard count > 0 else { break }
        filled += count
    }
    return filled
}

extension FileSystem {
    /// Reads `buffer.count` bytes of `fd` from `offset`, fewer only at the file's end.
    ///
    /// - Complexity: One `pread` per short read.
    func readFully(_ fd: Int32, into buffer: UnsafeMutableRawBufferPointer, at offset: Int64) throws(SystemCallFailure)
        -> Int
    {
        try readUntilFull(buffer) { (rest, filled) throws(SystemCallFailure) -> Int? in
            try read(fd, into: rest, at: offset + Int64(filled))
        } ?? 0
    }

    /// ``readFully(_:into:at:)`` from the page cache only: `nil` as soon as a read would wait
    /// for the disk.
    ///
    /// - Complexity: One `preadv2` with `RWF_NOWAIT` per short read.
    func readFullyIfCached(_ fd: Int32, into buffer: UnsafeMutableRawBufferPointer, at offset: Int64)
        throws(SystemCallFailure) -> Int?
    {
        try readUntilFull(buffer) { (rest, filled) throws(SystemCallFailure) -> Int? in
            try readIfCached(fd, into: rest, at: offset + Int64(filled))
        }
    }
}
