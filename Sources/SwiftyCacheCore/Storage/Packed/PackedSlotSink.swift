/// Stages a streamed slot for packed storage: in memory up to the inline limit, then in
/// `key.slot.tmp`.
final class PackedSlotSink: SlotSink {
    private let storage: PackedStorage
    private let key: String
    private let slot: Int
    private var buffer: [UInt8] = []
    private var fd: Int32 = -1
    private(set) var count = 0

    init(storage: PackedStorage, key: String, slot: Int) {
        self.storage = storage
        self.key = key
        self.slot = slot
    }

    func write(_ bytes: UnsafeRawBufferPointer) throws(CacheError) {
        let fileSystem = storage.directory.fileSystem
        if fd < 0 && !PackedRecord.isExternal(length: count + bytes.count, inlineLimit: storage.inlineLimit) {
            buffer.append(contentsOf: bytes)
            count += bytes.count
            return
        }
        if fd < 0 { try storage.refuseFileInSharedDirectory(key: key, length: count + bytes.count) }
        do {
            if fd < 0 {
                fd = try storage.files.createTemporaryFile(key: key, slot: slot)
                try fileSystem.writeAll(fd, buffer)
                buffer = []
            }
            try fileSystem.writeAll(fd, bytes)
        } catch {
            throw CacheError.ioFailure(
                error, operation: .write, path: storage.files.dirtyPath(key, slot), key: key)
        }
        count += bytes.count
    }

    /// The staged slot: in memory, or the closed temporary file.
    func finish() throws(CacheError) -> StagedSlot {
        guard fd >= 0 else { return StagedSlot(length: count, inline: buffer) }
        let fileSystem = storage.directory.fileSystem
        do {
            if storage.syncsWrites { try fileSystem.fsync(fd) }
            let closing = fd
            fd = -1
            try fileSystem.close(closing)
        } catch {
            discard()
            throw CacheError.ioFailure(error, operation: .write, path: storage.files.dirtyPath(key, slot), key: key)
        }
        return StagedSlot(length: count)
    }

    /// Deletes what was staged.
    func discard() {
        if fd >= 0 { try? storage.directory.fileSystem.close(fd) }
        fd = -1
        try? storage.files.removeValueFileIfPresent(key, slot, temporary: true)
    }
}
