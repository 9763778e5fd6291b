#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif

/// `async` overloads: the same operations, with their blocking file I/O run on a bounded pool
/// of I/O threads (one per core), off the caller's thread and off Swift's cooperative
/// pool (where blocking would starve other tasks). A task cancelled before its I/O starts gets
/// `CancellationError` and nothing is done.
extension DiskLRUCache {
    /// Runs `work` on `pool` and returns its result to the awaiting task. If the task is
    /// cancelled before `work` starts, `work` never runs and this throws `CancellationError`.
    ///
    /// The result travels through a mutex-guarded ``Handoff`` rather than inside the
    /// continuation: when the pool resumes the continuation before the task has suspended,
    /// the runtime's fast path orders the two threads with an atomic that ThreadSanitizer
    /// cannot see (swiftlang/swift#57803), and everything `work` wrote (a snapshot, the bytes
    /// read) would be reported as a race. The mutex makes the order explicit.
    package static func offload<T: Sendable>(
        on pool: IOThreadPool = .shared, _ work: @escaping @Sendable () throws -> T
    ) async throws -> T {
        try Task.checkCancellation()
        let handoff = Handoff<T>()
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                pool.submit {
                    guard handoff.start() else {
                        continuation.resume(throwing: CancellationError())
                        return
                    }
                    handoff.finish(Result { try work() })
                    continuation.resume()
                }
            }
        } onCancel: {
            handoff.cancel()
        }
        return try handoff.takeResult()
    }

    /// Returns a snapshot of the entry for `key`, or `nil`; see `snapshot(forKey:)`.
    public func snapshot(forKey key: String) async throws -> Snapshot? {
        try await Self.offload { try self.snapshot(forKey: key) }
    }

    /// Reads every slot of the entry for `key`, or `nil`; see `data(forKey:)`.
    ///
    /// Values in packed records already in the page cache are read on the caller's task,
    /// without a thread hop (a `preadv2` with `RWF_NOWAIT`, which never waits for the disk);
    /// anything else goes to the I/O pool.
    public func data(forKey key: String) async throws -> [Data]? {
        try Task.checkCancellation()
        switch try dataIfInMemory(forKey: key) {
        case .found(let values): return values
        case .missing: return nil
        case .needsIO: break
        }
        return try await Self.offload { try self.data(forKey: key) }
    }

    /// Creates or replaces every slot; see `setData(_:forKey:)`.
    public func setData(_ values: [Data], forKey key: String) async throws {
        try await Self.offload { try self.setData(values, forKey: key) }
    }

    /// Writes a batch of sets and removals as one unit; see `write(_:)`.
    public func write(_ batch: WriteBatch) async throws {
        try await Self.offload { try self.write(batch) }
    }

    /// Replaces some slots of an existing entry; see `setPartialData(_:forKey:)`.
    public func setPartialData(_ values: [Int: Data], forKey key: String) async throws {
        try await Self.offload { try self.setPartialData(values, forKey: key) }
    }

    /// Removes the entry for `key`; see `removeValue(forKey:)`.
    @discardableResult
    public func removeValue(forKey key: String) async throws -> Bool {
        try await Self.offload { try self.removeValue(forKey: key) }
    }

    /// Whether a committed entry exists for `key`; see `containsValue(forKey:)`.
    public func containsValue(forKey key: String) async throws -> Bool {
        try await Self.offload { try self.containsValue(forKey: key) }
    }

    /// The keys of committed entries; see `keys()`.
    public func keys() async throws -> [String] {
        try await Self.offload { try self.keys() }
    }

    /// Starts editing the entry for `key`; see `edit(forKey:)`.
    public func edit(forKey key: String) async throws -> Editor? {
        try await Self.offload { try self.edit(forKey: key) }
    }

    /// Changes the size limit; see `setMaxSize(_:)`.
    public func setMaxSize(_ maxSize: Int) async throws {
        try await Self.offload { try self.setMaxSize(maxSize) }
    }

    /// Removes every committed entry that is not being edited; see `evictAll()`.
    public func evictAll() async throws {
        try await Self.offload { try self.evictAll() }
    }

    /// Reclaims the space of replaced records now; see `compact()`.
    public func compact() async throws {
        try await Self.offload { try self.compact() }
    }

    /// Reads the journal again; see `refresh()`.
    public func refresh() async throws {
        try await Self.offload { try self.refresh() }
    }

    /// Evicts down to ``maxSize`` and writes buffered journal lines; see `flush()`.
    public func flush() async throws {
        try await Self.offload { try self.flush() }
    }

    /// Closes the cache; see `close()`.
    public func close() async throws {
        try await Self.offload { try self.close() }
    }

    /// Closes the cache and deletes its files; see `delete()`.
    public func delete() async throws {
        try await Self.offload { try self.delete() }
    }
}
