package import Dispatch

#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif

/// `async` overloads: the same operations, with their blocking file I/O run on a dedicated
/// concurrent dispatch queue, off the caller's thread and off Swift's cooperative pool (where
/// blocking would starve other tasks).
extension DiskLRUCache {
    /// The queue blocking file I/O of `async` calls runs on.
    static let ioQueue: DispatchQueue = {
        let queue = DispatchQueue(label: "SwiftyCache.DiskLRUCache.io", qos: .userInitiated, attributes: .concurrent)
        queue.setSpecific(key: ioQueueKey, value: true)
        return queue
    }()

    /// Marks work running on ``ioQueue``, so tests can tell where a call ran.
    package static let ioQueueKey = DispatchSpecificKey<Bool>()

    /// Runs `work` on ``ioQueue`` and returns its result to the awaiting task.
    package static func offload<T: Sendable>(_ work: @escaping @Sendable () throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            ioQueue.async {
                continuation.resume(with: Result { try work() })
            }
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
