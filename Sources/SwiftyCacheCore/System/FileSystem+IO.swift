/// Small helpers over the ``FileSystem`` seam that several parts of the engine share: whole
/// writes, whole reads of small files and deletes that tolerate absence. Each still goes
/// through the seam, so fault injection sees every call.
extension FileSystem {
    /// Writes all of `bytes`, looping over short writes.
    func writeAll(_ fd: Int32, _ bytes: UnsafeRawBufferPointer) throws(SystemCallFailure) {
        var offset = 0
        while offset < bytes.count {
            let written = try write(fd, UnsafeRawBufferPointer(rebasing: bytes[offset...]))
            // A write that makes no progress would loop forever; report it as an I/O error.
            guard written > 0 else { throw SystemCallFailure(call: "write", errno: Errno.io) }
            offset += written
        }
    }

    /// Writes all of `bytes`.
    func writeAll(_ fd: Int32, _ bytes: [UInt8]) throws(SystemCallFailure) {
        // A non-throwing closure: typed throws through `withUnsafeBytes` crashes Swift 6.3's IRGen.
        let result: Result<Void, SystemCallFailure> = bytes.withUnsafeBytes { buffer in
            do throws(SystemCallFailure) {
                try writeAll(fd, buffer)
                return .success(())
            } catch {
                return .failure(error)
            }
        }
        try result.get()
    }

    /// Reads a whole small file (the journal) into memory.
    func readWholeFile(_ path: String) throws(SystemCallFailure) -> [UInt8] {
        let fd = try open(path, flags: OpenFlags.readOnly, mode: 0)
        defer { try? close(fd) }
        var bytes: [UInt8] = []
        // Sized once up front: a journal of megabytes is not regrown chunk by chunk.
        bytes.reserveCapacity(Int(clamping: max(0, try size(of: fd))))
        let chunkSize = 64 << 10
        let chunk = UnsafeMutableRawBufferPointer.allocate(byteCount: chunkSize, alignment: 1)
        defer { chunk.deallocate() }
        var offset: Int64 = 0
        while true {
            let count = try read(fd, into: chunk, at: offset)
            if count == 0 { return bytes }
            bytes.append(contentsOf: UnsafeRawBufferPointer(rebasing: chunk[0..<count]))
            offset += Int64(count)
        }
    }

    /// Removes a file, treating "already gone" as success.
    func removeFileIfPresent(_ path: String) throws(SystemCallFailure) {
        do {
            try unlink(path)
        } catch  where error.errno == Errno.noEntry {
            return
        }
    }
}
