/// Buffered `READ` lines taken under the cache lock, with the journal's output lock held, to be
/// written once the cache lock is released. ``write()`` must be called exactly once, on the
/// thread that took them: it releases the output lock.
struct JournalReadFlush {
    let output: JournalOutput
    let fileSystem: any FileSystem
    let fd: Int32
    let bytes: [UInt8]
    let path: String

    /// Writes the lines and releases the output lock. A failure is kept for the cache to adopt:
    /// a torn line may now end the file, so nothing more is appended to it until a rebuild.
    ///
    /// - Complexity: One `write(2)` of at most ``JournalWriter/readBufferLimit`` bytes and a
    ///   line.
    func write() {
        defer { output.unlock() }
        do {
            // READ lines free nothing: they never take the space reserve.
            try output.append(bytes, to: fd, with: fileSystem, reserve: nil)
        } catch {
            output.recordFailure(CacheError.ioFailure(error, operation: .read, path: path))
        }
    }
}
