#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Writes a staged slot file for ``Editor/write(at:_:)``.
final class FileSlotSink: SlotSink {
    private let fd: Int32
    private let fileSystem: any FileSystem
    private let path: () -> String
    private let key: String
    private(set) var count = 0

    init(fd: Int32, fileSystem: any FileSystem, path: @escaping () -> String, key: String) {
        self.fd = fd
        self.fileSystem = fileSystem
        self.path = path
        self.key = key
    }

    func write(_ bytes: UnsafeRawBufferPointer) throws(CacheError) {
        do {
            try fileSystem.writeAll(fd, bytes)
        } catch {
            throw CacheError.ioFailure(error, operation: .write, path: path(), key: key)
        }
        count += bytes.count
    }
}
