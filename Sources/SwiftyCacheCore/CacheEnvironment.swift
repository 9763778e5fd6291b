/// What every part of the engine needs to touch the disk: the file system, the directory
/// and the file naming scheme. Immutable, so it is shared freely outside the lock.
struct CacheEnvironment: Sendable {
    let fileSystem: any FileSystem
    /// The cache directory, without a trailing slash.
    let directoryPath: String
    let appVersion: Int
    let valueCount: Int
    /// Whether commits `fsync` value files, the journal and the directory.
    let syncsWrites: Bool
    /// `directoryPath` and a slash, as bytes, for building value-file paths on the stack.
    let directoryPrefix: [UInt8]

    init(fileSystem: any FileSystem, directoryPath: String, appVersion: Int, valueCount: Int, syncsWrites: Bool) {
        self.fileSystem = fileSystem
        self.directoryPath = directoryPath
        self.appVersion = appVersion
        self.valueCount = valueCount
        self.syncsWrites = syncsWrites
        self.directoryPrefix = Array(directoryPath.utf8) + [UInt8(ascii: "/")]
    }

    var journalPath: String { path(Journal.fileName) }
    var temporaryJournalPath: String { path(Journal.temporaryFileName) }
    var backupJournalPath: String { path(Journal.backupFileName) }
    var lockPath: String { path(Journal.lockFileName) }
    var cleanMarkerPath: String { path(Journal.cleanMarkerFileName) }

    func path(_ name: String) -> String { directoryPath + "/" + name }

    /// `key.slot`: the committed value of one slot.
    func cleanPath(_ key: String, _ slot: Int) -> String {
        var path = ""
        path.reserveCapacity(directoryPath.utf8.count + key.utf8.count + 8)
        path += directoryPath
        path += "/"
        path += key
        path += "."
        path += String(slot)
        return path
    }

    /// `key.slot.tmp`: the value an editor is writing.
    func dirtyPath(_ key: String, _ slot: Int) -> String {
        var path = cleanPath(key, slot)
        path += ".tmp"
        return path
    }

    /// Calls `body` with the NUL-terminated path of a value file, `key.slot` or, when
    /// `temporary`, `key.slot.tmp`, built in stack memory: the per-operation paths allocate
    /// nothing. The pointer is valid only inside `body`.
    @inline(__always)
    func withSlotPath<Result, Failure: Error>(
        _ key: String, _ slot: Int, temporary: Bool,
        _ body: (UnsafePointer<CChar>) throws(Failure) -> Result
    ) throws(Failure) -> Result {
        var key = key
        // Keys are validated ASCII of at most 120 bytes; a slot number has at most 19 digits.
        let capacity = directoryPrefix.count + key.utf8.count + 32
        return try withUnsafeTemporaryAllocation(of: UInt8.self, capacity: capacity) {
            (buffer) throws(Failure) -> Result in
            var count = 0
            directoryPrefix.withUnsafeBufferPointer { prefix in
                for byte in prefix {
                    buffer[count] = byte
                    count += 1
                }
            }
            key.withUTF8 { utf8 in
                for byte in utf8 {
                    buffer[count] = byte
                    count += 1
                }
            }
            buffer[count] = UInt8(ascii: ".")
            count += 1
            var digits = 1
            var power = 10
            while slot >= power && digits < 19 {
                digits += 1
                power = power &* 10
            }
            var remaining = slot
            for position in stride(from: count + digits - 1, through: count, by: -1) {
                buffer[position] = UInt8(ascii: "0") + UInt8(truncatingIfNeeded: remaining % 10)
                remaining /= 10
            }
            count += digits
            if temporary {
                for byte in ".tmp".utf8 {
                    buffer[count] = byte
                    count += 1
                }
            }
            buffer[count] = 0
            // Never nil with a non-zero capacity; an empty path would only fail the call.
            guard let base = buffer.baseAddress else { return try body("") }
            return try UnsafeRawPointer(base).withMemoryRebound(to: CChar.self, capacity: count + 1) {
                (path) throws(Failure) -> Result in
                try body(path)
            }
        }
    }

    /// Writes all of `bytes`, looping over short writes.
    func writeAll(_ fd: Int32, _ bytes: UnsafeRawBufferPointer) throws(SystemCallError) {
        var offset = 0
        while offset < bytes.count {
            let written = try fileSystem.write(fd, UnsafeRawBufferPointer(rebasing: bytes[offset...]))
            // A write that makes no progress would loop forever; report it as an I/O error.
            guard written > 0 else { throw SystemCallError(call: "write", errno: Errno.io) }
            offset += written
        }
    }

    /// Writes all of `bytes`.
    func writeAll(_ fd: Int32, _ bytes: [UInt8]) throws(SystemCallError) {
        // A non-throwing closure: typed throws through `withUnsafeBytes` crashes Swift 6.3's IRGen.
        let result: Result<Void, SystemCallError> = bytes.withUnsafeBytes { buffer in
            do throws(SystemCallError) {
                try writeAll(fd, buffer)
                return .success(())
            } catch {
                return .failure(error)
            }
        }
        try result.get()
    }

    /// Reads a whole small file (the journal) into memory.
    func readWholeFile(_ path: String) throws(SystemCallError) -> [UInt8] {
        let fd = try fileSystem.open(path, flags: OpenFlags.readOnly, mode: 0)
        defer { try? fileSystem.close(fd) }
        var bytes: [UInt8] = []
        // Sized once up front: a journal of megabytes is not regrown chunk by chunk.
        bytes.reserveCapacity(Int(clamping: max(0, try fileSystem.size(of: fd))))
        let chunkSize = 64 << 10
        let chunk = UnsafeMutableRawBufferPointer.allocate(byteCount: chunkSize, alignment: 1)
        defer { chunk.deallocate() }
        var offset: Int64 = 0
        while true {
            let count = try fileSystem.read(fd, into: chunk, at: offset)
            if count == 0 { return bytes }
            bytes.append(contentsOf: UnsafeRawBufferPointer(rebasing: chunk[0..<count]))
            offset += Int64(count)
        }
    }

    /// Removes a file, treating "already gone" as success.
    func removeFileIfPresent(_ path: String) throws(SystemCallError) {
        do {
            try fileSystem.unlink(path)
        } catch where error.errno == Errno.noEntry {
            return
        }
    }

    /// Deletes a value file, `key.slot` or `key.slot.tmp`; its absence is not an error.
    func removeValueFileIfPresent(_ key: String, _ slot: Int, temporary: Bool) throws(SystemCallError) {
        let fileSystem = self.fileSystem
        do {
            try withSlotPath(key, slot, temporary: temporary) { path throws(SystemCallError) in
                try fileSystem.unlink(cString: path)
            }
        } catch where error.errno == Errno.noEntry {
            return
        }
    }

    /// Creates the directory and any missing parents, the ones it creates with mode 0700.
    func createDirectory() throws(CacheError) {
        var prefix = directoryPath.hasPrefix("/") ? "" : "."
        for component in directoryPath.split(separator: "/") {
            prefix += "/" + component
            do {
                try fileSystem.mkdir(prefix, mode: FileModes.directory)
            } catch where error.errno == Errno.exists {
                continue
            } catch where error.errno == Errno.notDirectory {
                throw CacheError(
                    code: .invalidConfiguration, message: "a component of the cache path is not a directory",
                    path: prefix, operation: "open", cause: error)
            } catch {
                throw CacheError.io(error, operation: "create directory", path: prefix)
            }
        }
        let kind: FileKind?
        do {
            kind = try fileSystem.kind(of: directoryPath)
        } catch {
            throw CacheError.io(error, operation: "open", path: directoryPath)
        }
        // A symbolic link is accepted here: the user chose that path. The cache never follows
        // links *inside* the directory.
        guard kind == .directory || kind == .symbolicLink else {
            throw CacheError(
                code: .invalidConfiguration, message: "the cache path exists and is not a directory",
                path: directoryPath, operation: "open")
        }
    }

    /// Opens the lock file and takes its exclusive advisory lock.
    ///
    /// A cache of this process on the same directory is refused at once, through a registry of
    /// locked files. Another process's lock is retried for up to 0.1 s before giving up: a lock
    /// released by `close()` lingers in any child forked meanwhile until that child calls `exec`.
    func acquireLock() throws(CacheError) -> DirectoryLock {
        let fd: Int32
        let identity: FileIdentity
        do {
            fd = try fileSystem.open(lockPath, flags: OpenFlags.lockFile, mode: FileModes.file)
        } catch {
            throw CacheError.io(error, operation: "lock directory", path: lockPath)
        }
        do {
            identity = try fileSystem.identity(of: fd)
        } catch {
            try? fileSystem.close(fd)
            throw CacheError.io(error, operation: "lock directory", path: lockPath)
        }
        let locked = CacheError(
            code: .directoryLocked,
            message: "another DiskLRUCache, in this process or another, has this directory open; close it first",
            path: directoryPath, operation: "open")
        guard DirectoryLock.register(identity) else {
            try? fileSystem.close(fd)
            throw locked
        }
        var attempts = 0
        while true {
            do {
                try fileSystem.lockExclusively(fd)
                return DirectoryLock(fd: fd, identity: identity)
            } catch where error.errno == Errno.wouldBlock && attempts < 100 {
                attempts += 1
                DirectoryLock.pause()
            } catch {
                DirectoryLock.unregister(identity)
                try? fileSystem.close(fd)
                if error.errno == Errno.wouldBlock {
                    var failure = locked
                    failure.cause = error
                    throw failure
                }
                throw CacheError.io(error, operation: "lock directory", path: lockPath)
            }
        }
    }

    /// Deletes everything in the directory except the lock file, recursing into folders
    /// without following symbolic links. Errors on single files are ignored: what cannot be
    /// deleted is overwritten or swept later.
    func emptyDirectory(keepingLock: Bool) {
        removeContents(of: directoryPath, keepingLock: keepingLock)
    }

    private func removeContents(of path: String, keepingLock: Bool) {
        guard let names = try? fileSystem.contentsOfDirectory(path) else { return }
        for name in names {
            if keepingLock && path == directoryPath && name == Journal.lockFileName { continue }
            let child = path + "/" + name
            if (try? fileSystem.kind(of: child)) == .directory {
                removeContents(of: child, keepingLock: false)
                try? fileSystem.rmdir(child)
            } else {
                try? fileSystem.unlink(child)
            }
        }
    }

    /// Leaves the marker that tells the next open no stray file exists. Best effort: without
    /// it, the next open sweeps the directory, which is only slower.
    func leaveCleanMarker() {
        guard let fd = try? fileSystem.open(cleanMarkerPath, flags: OpenFlags.createTruncate, mode: FileModes.file) else {
            return
        }
        try? fileSystem.close(fd)
    }

    /// Flushes the directory itself, so that renames and creations in it survive a power loss.
    func syncDirectory() throws(SystemCallError) {
        let fd = try fileSystem.open(directoryPath, flags: OpenFlags.directory, mode: 0)
        defer { try? fileSystem.close(fd) }
        try fileSystem.fsync(fd)
    }
}
