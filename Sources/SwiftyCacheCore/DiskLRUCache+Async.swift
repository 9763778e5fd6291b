import Synchronization

#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif

/// `async` overloads: the same operations, with their blocking file I/O run on a bounded pool
/// of I/O threads (``asyncIOThreadLimit``), off the caller's thread and off Swift's cooperative
/// pool (where blocking would starve other tasks). A task cancelled before its I/O starts gets
/// `CancellationError` and nothing is done.
extension DiskLRUCache {
    /// The most threads that run the `async` overloads' file I/O at once, for every cache of the
    /// process. The default is the number of cores; a burst of requests waits its turn rather
    /// than starting a thread each.
    public static var asyncIOThreadLimit: Int {
        get { IOThreadPool.shared.limit }
        set { IOThreadPool.shared.limit = newValue }
    }

    /// Runs `work` on `pool` and returns its result to the awaiting task. If the task is
    /// cancelled before `work` starts, `work` never runs and this throws `CancellationError`.
    package static func offload<T: Sendable>(
        on pool: IOThreadPool = .shared, _ work: @escaping @Sendable () throws -> T
    ) async throws -> T {
        try Task.checkCancellation()
        let cancelled = CancellationFlag()
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                pool.submit {
                    guard !cancelled.isSet else {
                        continuation.resume(throwing: CancellationError())
                        return
                    }
                    continuation.resume(with: Result { try work() })
                }
            }
        } onCancel: {
            cancelled.set()
        }
    }

    /// Returns a snapshot of the entry for `key`, or `nil`; see `snapshot(forKey:)`.
    public func snapshot(forKey key: String) async throws -> Snapshot? {
        try await Self.offload { try self.snapshot(forKey: key) }
    }

    /// Reads every slot of the entry for `key`, or `nil`; see `data(forKey:)`.
    public func data(forKey key: String) async throws -> [Data]? {
        try await Self.offload { try self.data(forKey: key) }
    }

    /// Creates or replaces every slot; see `setData(_:forKey:)`.
    public func setData(_ values: [Data], forKey key: String) async throws {
        try await Self.offload { try self.setData(values, forKey: key) }
    }

    /// Replaces some slots of an existing entry; see `setPartialData(_:forKey:)`.
    public func setPartialData(_ values: [Int: Data], forKey key: String) async throws {
        try await Self.offload { try self.setPartialData(values, forKey: key) }
    }

    /// Removes the entry for `key`; see `remove(_:)`.
    @discardableResult
    public func remove(_ key: String) async throws -> Bool {
        try await Self.offload { try self.remove(key) }
    }

    /// Evicts down to ``maxSize`` and writes buffered journal lines; see `flush()`.
    public func flush() async throws {
        try await Self.offload { try self.flush() }
    }

    /// Closes the cache; see `close()`.
    public func close() async throws {
        try await Self.offload { try self.close() }
    }
}

/// Set when the awaiting task is cancelled, read by the job before it starts.
final class CancellationFlag: Sendable {
    private let value = Atomic(false)
    var isSet: Bool { value.load(ordering: .acquiring) }
    func set() { value.store(true, ordering: .releasing) }
}
