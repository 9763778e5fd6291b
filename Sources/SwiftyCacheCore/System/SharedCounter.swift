import Synchronization

#if canImport(Darwin)
import Darwin
#elseif canImport(Glibc)
@preconcurrency import Glibc
#elseif canImport(Musl)
@preconcurrency import Musl
#endif

/// A counter kept in the first bytes of a file and mapped (`mmap`, `MAP_SHARED`) into every
/// process that opens it: what a cache that shares its directory bumps after each change it
/// journals, and what the others' reads compare with the count they last saw, so that a read
/// after nothing changed makes no system call. Where the file cannot be mapped, there is no
/// counter and reads look at the journal itself.
final class SharedCounter: @unchecked Sendable {
    // @unchecked Sendable is sound: `counter` points into a mapping this object creates in
    // `init` and unmaps only in `deinit`, and every access to it is an operation of `Atomic`.
    private let mapping: UnsafeMutableRawPointer
    private let counter: UnsafeMutablePointer<Atomic<UInt64>>
    private static let mappedBytes = 4096

    /// Maps the first page of the file open at `fd` (read and write), growing the file to a
    /// page first if it is shorter (a new file is zeros: the count starts at 0); `nil` when
    /// that fails.
    init?(fd: Int32) {
        var status = stat()
        guard fstat(fd, &status) == 0 else { return nil }
        if status.st_size < Self.mappedBytes {
            guard ftruncate(fd, off_t(Self.mappedBytes)) == 0 else { return nil }
        }
        let mapped = mmap(nil, Self.mappedBytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0)
        guard let mapped, mapped != MAP_FAILED else { return nil }
        mapping = mapped
        counter = mapped.bindMemory(to: Atomic<UInt64>.self, capacity: 1)
    }

    deinit {
        munmap(mapping, Self.mappedBytes)
    }

    /// The count now.
    func load() -> UInt64 { counter.pointee.load(ordering: .acquiring) }

    /// Adds one, after the changes it announces were written; returns the new count.
    @discardableResult
    func increment() -> UInt64 { counter.pointee.wrappingAdd(1, ordering: .releasing).newValue }
}
