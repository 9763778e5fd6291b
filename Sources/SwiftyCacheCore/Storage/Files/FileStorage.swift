#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Values in one file per slot, the Java `DiskLruCache` layout: `key.0`, `key.1`, … hold the
/// committed values; an edit writes `key.i.tmp` and publishing renames it over `key.i`.
///
/// A committed file is never written in place, so a descriptor opened on it keeps reading the
/// same bytes after a later commit renames a new file over the name, or a removal unlinks it.
struct FileStorage: ValueStorage {
    let directory: CacheDirectory
    let valueCount: Int
    /// Whether each staged file is `fsync`ed before it is closed.
    let syncsWrites: Bool
    /// The directory's path and a slash, as bytes, for building value-file paths on the stack.
    private let directoryPrefix: [UInt8]

    init(directory: CacheDirectory, valueCount: Int, syncsWrites: Bool) {
        self.directory = directory
        self.valueCount = valueCount
        self.syncsWrites = syncsWrites
        self.directoryPrefix = Array(directory.path.utf8) + [UInt8(ascii: "/")]
    }

    private var fileSystem: any FileSystem { directory.fileSystem }

    // MARK: Names

    /// `key.slot`: the committed value of one slot.
    func cleanPath(_ key: String, _ slot: Int) -> String {
        directory.path(CacheFileName.value(key: key, slot: slot).name)
    }

    /// `key.slot.tmp`: the value an edit is writing.
    func dirtyPath(_ key: String, _ slot: Int) -> String {
        directory.path(CacheFileName.stagedValue(key: key, slot: slot).name)
    }

    func path(key: String, slot: Int, staged: Bool) -> String {
        staged ? dirtyPath(key, slot) : cleanPath(key, slot)
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
                for byte in CacheFileName.stagedSuffix.utf8 {
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

    /// Deletes a value file, `key.slot` or `key.slot.tmp`; its absence is not an error.
    func removeValueFileIfPresent(_ key: String, _ slot: Int, temporary: Bool) throws(SystemCallFailure) {
        let fileSystem = self.fileSystem
        do {
            try withSlotPath(key, slot, temporary: temporary) { path throws(SystemCallFailure) in
                try fileSystem.unlink(cString: path)
            }
        } catch  where error.errno == Errno.noEntry {
            return
        }
    }

    // MARK: Staging

    func stage(key: String, slot: Int, contents: UnsafeRawBufferPointer) throws(CacheError) -> StagedSlot {
        let fileSystem = self.fileSystem
        let result: Result<Int, any Error> = Result {
            try writeTemporary(key: key, slot: slot) { fd in
                do {
                    try fileSystem.writeAll(fd, contents)
                } catch {
                    throw CacheError.ioFailure(error, operation: .write, path: dirtyPath(key, slot), key: key)
                }
                return contents.count
            }
        }
        switch result {
        case .success(let length): return StagedSlot(length: length)
        case .failure(let error as CacheError): throw error
        case .failure(let error):
            throw CacheError.ioFailure(error, operation: .write, path: dirtyPath(key, slot), key: key)
        }
    }

    func stage(key: String, slot: Int, streaming body: (any SlotSink) throws -> Void) throws -> StagedSlot {
        let length = try writeTemporary(key: key, slot: slot) { fd in
            let sink = FileSlotSink(fd: fd, fileSystem: fileSystem, path: { dirtyPath(key, slot) }, key: key)
            try body(sink)
            return sink.count
        }
        return StagedSlot(length: length)
    }

    /// Creates `key.slot.tmp` (truncating a leftover), lets `body` write it, and closes it;
    /// returns what `body` returns, the byte count. On any failure the file is deleted.
    ///
    /// - Complexity: One `open`, `body`'s writes and one `close` (plus `fsync` with
    ///   `syncsWrites`); the path is built on the stack.
    func writeTemporary(key: String, slot: Int, _ body: (Int32) throws -> Int) throws -> Int {
        let fd = try createTemporaryFile(key: key, slot: slot)
        var isOpen = true
        do {
            let count = try body(fd)
            if syncsWrites { try fileSystem.fsync(fd) }
            isOpen = false
            try fileSystem.close(fd)
            return count
        } catch {
            if isOpen { try? fileSystem.close(fd) }
            try? removeValueFileIfPresent(key, slot, temporary: true)
            if let error = error as? SystemCallFailure {
                throw CacheError.ioFailure(error, operation: .write, path: dirtyPath(key, slot), key: key)
            }
            throw error
        }
    }

    /// Opens a new, empty `key.slot.tmp` for writing; a vanished directory is
    /// ``CacheError/directoryVanished(_:operation:path:key:file:line:)``.
    func createTemporaryFile(key: String, slot: Int) throws(CacheError) -> Int32 {
        let fileSystem = self.fileSystem
        let create = { () throws(SystemCallFailure) -> Int32 in
            try withSlotPath(key, slot, temporary: true) { path throws(SystemCallFailure) in
                try fileSystem.open(cString: path, flags: OpenFlags.createTruncate, mode: FileModes.file)
            }
        }
        do {
            return try create()
        } catch  where error.errno == Errno.loop {
            // Something planted a symbolic link where the temporary file goes. `O_NOFOLLOW`
            // refused it; remove the link itself and write a regular file.
            do {
                try removeValueFileIfPresent(key, slot, temporary: true)
                return try create()
            } catch {
                throw directory.writeFailure(error, operation: .write, path: dirtyPath(key, slot), key: key)
            }
        } catch {
            throw directory.writeFailure(error, operation: .write, path: dirtyPath(key, slot), key: key)
        }
    }

    // MARK: Publishing

    /// Renames each staged `key.i.tmp` over `key.i`, in slot order.
    func publish(key: String, staged: [StagedSlot?], committed: CommittedValues?) throws(PublishFailure)
        -> ValueLocation
    {
        var publishedAny = false
        for slot in staged.indices where staged[slot] != nil {
            do throws(SystemCallFailure) {
                let fileSystem = self.fileSystem
                try withSlotPath(key, slot, temporary: true) { dirty throws(SystemCallFailure) in
                    try withSlotPath(key, slot, temporary: false) { clean throws(SystemCallFailure) in
                        try fileSystem.rename(cString: dirty, to: clean)
                    }
                }
            } catch {
                let failure = directory.writeFailure(error, operation: .commit, path: dirtyPath(key, slot), key: key)
                throw PublishFailure(error: failure, publishedAny: publishedAny)
            }
            publishedAny = true
        }
        return .none
    }

    func discard(key: String, staged: [StagedSlot?]) -> Bool {
        var deletedAll = true
        for slot in staged.indices where staged[slot] != nil {
            do { try removeValueFileIfPresent(key, slot, temporary: true) } catch { deletedAll = false }
        }
        return deletedAll
    }

    // MARK: Reading

    /// Opens every slot file of `key` (`O_NONBLOCK | O_NOFOLLOW`) and checks that it is a
    /// regular file of the length the journal recorded. Called outside the cache lock.
    ///
    /// - Complexity: One `open` and one `fstat` per slot.
    func open(key: String, location: ValueLocation, lengths: SlotLengths) throws(CacheError) -> OpenedValues? {
        let fileSystem = self.fileSystem
        var descriptors: [Int32] = []
        descriptors.reserveCapacity(valueCount)
        for slot in 0..<valueCount {
            do throws(SystemCallFailure) {
                descriptors.append(try openSlot(key: key, slot: slot, length: lengths[slot]))
            } catch {
                for fd in descriptors { try? fileSystem.close(fd) }
                // The file was deleted, replaced by a link or something else, or truncated.
                guard Self.isDamage(error) else {
                    throw CacheError.ioFailure(error, operation: .snapshot, path: cleanPath(key, slot), key: key)
                }
                return nil
            }
        }
        return OpenedValues(descriptors: descriptors)
    }

    /// Opens `key.slot` for reading and checks that it is a regular file of `length` bytes: a
    /// FIFO, a device or a directory planted under the name never makes a read wait or misread.
    /// A failed check throws an `fstat` error with `EIO`.
    func openSlot(key: String, slot: Int, length: Int) throws(SystemCallFailure) -> Int32 {
        let fileSystem = self.fileSystem
        let fd = try withSlotPath(key, slot, temporary: false) { path throws(SystemCallFailure) in
            try fileSystem.open(cString: path, flags: OpenFlags.readOnly, mode: 0)
        }
        do throws(SystemCallFailure) {
            let status = try fileSystem.status(of: fd)
            guard status.kind == .regular, status.size == Int64(length) else {
                throw SystemCallFailure(call: "fstat", errno: Errno.io)
            }
        } catch {
            try? fileSystem.close(fd)
            throw error
        }
        return fd
    }

    /// Whether an error from ``openSlot(key:slot:length:)`` means the value is missing or
    /// damaged (a miss), rather than a failure to report.
    static func isDamage(_ error: SystemCallFailure) -> Bool {
        let damage = [Errno.noEntry, Errno.loop, Errno.nameTooLong, Errno.isDirectory, Errno.noDeviceOrAddress]
        return damage.contains(error.errno) || error.call == "fstat"
    }

    /// Opens and reads every slot of `key` from memory only: each path resolved from the
    /// kernel's caches (`openat2` with `RESOLVE_CACHED`), each file's bytes from the page
    /// cache (`preadv2` with `RWF_NOWAIT`). ``ReadResult/needsIO`` as soon as anything
    /// would wait for the disk or fails (the full read then reports the error), and
    /// ``ReadResult/missing`` for a file missing or of the wrong kind or length.
    ///
    /// - Complexity: One `openat2`, `fstat`, `preadv2` and `close` per slot.
    func readValuesIfCached(key: String, location: ValueLocation, lengths: SlotLengths) -> ReadResult<[Data]> {
        let fileSystem = self.fileSystem
        var values: [Data] = []
        values.reserveCapacity(valueCount)
        for slot in 0..<valueCount {
            let opened: Int32?
            do throws(SystemCallFailure) {
                opened = try withSlotPath(key, slot, temporary: false) { (path) throws(SystemCallFailure) in
                    try fileSystem.openIfCached(cString: path, flags: OpenFlags.readOnly)
                }
            } catch {
                return Self.isDamage(error) ? .missing : .needsIO
            }
            guard let fd = opened else { return .needsIO }
            defer { try? fileSystem.close(fd) }
            guard let status = try? fileSystem.status(of: fd), status.kind == .regular,
                status.size == Int64(lengths[slot])
            else { return .missing }
            var wouldWait = false
            let bytes = [UInt8](unsafeUninitializedCapacity: lengths[slot]) { buffer, initialized in
                let read = try? fileSystem.readFullyIfCached(fd, into: UnsafeMutableRawBufferPointer(buffer), at: 0)
                // Short of the length `fstat` gave: the file changed meanwhile; the full read decides.
                guard let read, read == buffer.count else {
                    wouldWait = true
                    return
                }
                initialized = read
            }
            if wouldWait { return .needsIO }
            values.append(Data(bytes))
        }
        return .found(values)
    }

    func read(
        _ values: OpenedValues, slot: Int, key: String, into buffer: UnsafeMutableRawBufferPointer, at offset: Int
    ) throws(CacheError) -> Int {
        do {
            return try fileSystem.read(values.descriptors[slot], into: buffer, at: Int64(offset))
        } catch {
            throw CacheError.ioFailure(error, operation: .read, path: cleanPath(key, slot), key: key)
        }
    }

    func close(_ values: OpenedValues) {
        for fd in values.descriptors { try? fileSystem.close(fd) }
    }

    // MARK: Deleting

    func delete(key: String, location: ValueLocation, lengths: SlotLengths) -> Bool {
        var deletedAll = true
        for slot in 0..<valueCount {
            do { try removeValueFileIfPresent(key, slot, temporary: false) } catch { deletedAll = false }
        }
        return deletedAll
    }

    func deleteEverything(of key: String) -> Bool {
        var deletedAll = true
        for slot in 0..<valueCount {
            for temporary in [false, true] {
                do { try removeValueFileIfPresent(key, slot, temporary: temporary) } catch { deletedAll = false }
            }
        }
        return deletedAll
    }

    // MARK: Accounting

    /// The bytes held by the committed value files (`key.N`) in `directory`, for a cache that
    /// is not open. Links and special files are not counted, and nothing is followed.
    ///
    /// - Complexity: O(files in the directory): one `lstat`, `open` and `fstat` per value file.
    static func valueBytes(in directory: CacheDirectory) -> Int {
        let fileSystem = directory.fileSystem
        guard let names = try? fileSystem.contentsOfDirectory(directory.path) else { return 0 }
        var total = 0
        for name in names {
            guard case .value = CacheFileName(name) else { continue }
            let path = directory.path(name)
            guard (try? fileSystem.kind(of: path)) == .regular,
                let fd = try? fileSystem.open(path, flags: OpenFlags.readOnly, mode: 0)
            else { continue }
            let (sum, overflow) = total.addingReportingOverflow(Int(clamping: (try? fileSystem.size(of: fd)) ?? 0))
            total = overflow ? Int.max : sum
            try? fileSystem.close(fd)
        }
        return total
    }
}
