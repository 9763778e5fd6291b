import SwiftyCacheCore

#if canImport(Darwin)
import Dispatch
#endif

/// A cache whose memory tier the relay shrinks.
protocol MemoryTrimming: AnyObject, Sendable {
    func trimMemory(_ trim: MemoryTrim)
}

/// Hands the system's memory-pressure events to the open caches: on Apple platforms one
/// dispatch memory-pressure source for the process (`.warning` → ``MemoryTrim/warning``,
/// `.critical` → ``MemoryTrim/critical``), created when the first cache joins. Other platforms
/// have no such event (Linux's pressure stall information is a per-cgroup file, not a
/// notification every process can rely on): there the relay only holds its members, and apps
/// call ``ObjectCache/trimMemory(_:)`` themselves.
///
/// Members are held weakly: a cache dropped without `close()` leaves by itself. The relay's
/// lock is never held while a cache trims.
final class MemoryPressureRelay: Sendable {
    /// The process's relay, fed by the system's events.
    static let shared = MemoryPressureRelay(listensToSystem: true)

    private struct Member: Sendable {
        weak var cache: (any MemoryTrimming)?
    }

    private let members = LockedState<[ObjectIdentifier: Member]>([:])
    private let listensToSystem: Bool
    #if canImport(Darwin)
    private let source = LockedState<SystemSource?>(nil)
    #endif

    /// A relay; only ``shared`` listens to the system.
    init(listensToSystem: Bool = false) {
        self.listensToSystem = listensToSystem
    }

    /// Adds `cache`, until ``remove(_:)`` or its release.
    func add(_ cache: any MemoryTrimming) {
        members.withLock { members in
            members = members.filter { $0.value.cache != nil }
            members[ObjectIdentifier(cache)] = Member(cache: cache)
        }
        if listensToSystem { startListening() }
    }

    /// Removes `cache`.
    func remove(_ cache: any MemoryTrimming) {
        _ = members.withLock { $0.removeValue(forKey: ObjectIdentifier(cache)) }
    }

    /// Whether `cache` is a member.
    func contains(_ cache: any MemoryTrimming) -> Bool {
        members.withLock { $0[ObjectIdentifier(cache)]?.cache != nil }
    }

    /// Trims every member's memory, outside the relay's lock.
    func relay(_ trim: MemoryTrim) {
        let caches = members.withLock { $0.values.compactMap(\.cache) }
        for cache in caches { cache.trimMemory(trim) }
    }

    private func startListening() {
        #if canImport(Darwin)
        source.withLock { source in
            guard source == nil else { return }
            source = SystemSource { [weak self] trim in self?.relay(trim) }
        }
        #endif
    }
}

#if canImport(Darwin)
/// The dispatch memory-pressure source, created, configured and activated once, then only kept.
///
/// `@unchecked Sendable`: its one stored property is a `let` set in `init`, and a dispatch
/// source is a thread-safe object (Dispatch documents its objects as safe to use from any
/// thread); nothing mutates it after `activate()`.
private final class SystemSource: @unchecked Sendable {
    private let source: any DispatchSourceMemoryPressure
    private let handler: @Sendable (MemoryTrim) -> Void

    init(_ handler: @escaping @Sendable (MemoryTrim) -> Void) {
        self.handler = handler
        self.source = DispatchSource.makeMemoryPressureSource(
            eventMask: [.warning, .critical], queue: DispatchQueue.global(qos: .utility))
        source.setEventHandler { [weak self] in self?.deliver() }
        source.activate()
    }

    private func deliver() {
        handler(source.data.contains(.critical) ? .critical : .warning)
    }
}
#endif
