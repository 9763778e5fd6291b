public import Foundation

/// A fresh directory for one test, deleted when the value is released.
///
/// Tests run in parallel, so each gets its own, named after the test plus a random suffix.
public final class TemporaryDirectory: Sendable {
    /// The directory's URL.
    public let url: URL

    /// - Parameters:
    ///   - name: Part of the directory's name, for finding it while a test runs.
    ///   - inMemory: Whether to place it on a memory file system (`/dev/shm`) where there is
    ///     one: for tests about bytes, not durability, whose `fsync`s would otherwise wait for
    ///     the disk.
    public init(_ name: String = #function, inMemory: Bool = false) {
        let safeName = name.filter { $0.isLetter || $0.isNumber }.prefix(40)
        let memory = URL(filePath: "/dev/shm", directoryHint: .isDirectory)
        let base =
            inMemory && FileManager.default.isWritableFile(atPath: memory.path(percentEncoded: false))
            ? memory : FileManager.default.temporaryDirectory
        url = base.appending(
            path: "swiftycache-\(safeName)-\(UUID().uuidString.prefix(8))", directoryHint: .isDirectory)
        try? FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }

    deinit {
        try? FileManager.default.removeItem(at: url)
    }

    /// A path below the directory.
    public func appending(_ component: String) -> URL {
        url.appending(path: component)
    }

    public var path: String { url.path(percentEncoded: false) }
}

/// Runs `body` with a fresh directory that is deleted afterwards.
public func withTemporaryDirectory<T>(_ name: String = #function, _ body: (URL) throws -> T) rethrows -> T {
    let directory = TemporaryDirectory(name)
    return try withExtendedLifetime(directory) { try body(directory.url) }
}
