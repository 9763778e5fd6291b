import Synchronization

#if canImport(Darwin)
import Darwin
#elseif canImport(Glibc)
@preconcurrency import Glibc
#elseif canImport(Musl)
@preconcurrency import Musl
#endif

/// The first page of a file mapped (`mmap`, `MAP_SHARED`) into every process that opens it,
/// read and written as 64-bit atomic words: what the caches sharing a directory tell each
/// other without a system call (``SharedDirectoryLock/Word`` names the words). Where the file
/// cannot be mapped, there is no page, and the caches look at the journal itself.
final class SharedPage: @unchecked Sendable {
    // @unchecked Sendable is sound: `words` points into a mapping this object creates in
    // `init` and unmaps only in `deinit`, and every access to it is an operation of `Atomic`
    // on one of the page's `wordCount` words (an index past them is refused).
    private let mapping: UnsafeMutableRawPointer
    private let words: UnsafeMutablePointer<Atomic<UInt64>>
    private static let mappedBytes = 4096
    /// How many words the page holds.
    static let wordCount = mappedBytes / MemoryLayout<UInt64>.stride

    /// Maps the first page of the file open at `fd` (read and write), growing the file to a
    /// page first if it is shorter (a new file is zeros: every word starts at 0); `nil` when
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
        words = mapped.bindMemory(to: Atomic<UInt64>.self, capacity: Self.wordCount)
    }

    deinit {
        munmap(mapping, Self.mappedBytes)
    }

    /// Word `index` now (0 for an index past the page).
    func load(_ index: Int) -> UInt64 {
        guard index >= 0, index < Self.wordCount else { return 0 }
        return words[index].load(ordering: .acquiring)
    }

    /// Sets word `index`, after what its new value announces was written.
    func store(_ value: UInt64, at index: Int) {
        guard index >= 0, index < Self.wordCount else { return }
        words[index].store(value, ordering: .releasing)
    }

    /// Takes one from word `index` (never below 0: a word a crash left wrong is not made to wrap).
    func decrement(_ index: Int) {
        guard index >= 0, index < Self.wordCount else { return }
        var current = words[index].load(ordering: .relaxed)
        while current > 0 {
            let (exchanged, original) = words[index].compareExchange(
                expected: current, desired: current - 1, ordering: .acquiringAndReleasing)
            if exchanged { return }
            current = original
        }
    }

    /// Raises word `index` to `value` unless it holds more already, after what it announces
    /// was written; returns what it holds then.
    @discardableResult
    func raise(_ index: Int, to value: UInt64) -> UInt64 {
        guard index >= 0, index < Self.wordCount else { return 0 }
        var current = words[index].load(ordering: .relaxed)
        while current < value {
            let (exchanged, original) = words[index].compareExchange(
                expected: current, desired: value, ordering: .acquiringAndReleasing)
            if exchanged { return value }
            current = original
        }
        return current
    }

    /// Adds one to word `index`, after what it announces was written; returns the new value.
    @discardableResult
    func increment(_ index: Int) -> UInt64 {
        guard index >= 0, index < Self.wordCount else { return 0 }
        return words[index].wrappingAdd(1, ordering: .releasing).newValue
    }
}
