/// What a ``ChangeBuffer`` needs of a change: the key it coalesces by (`nil`: a change of every
/// key, which supersedes what waits), and the change that stands for dropped ones.
package protocol ObservedChange: Sendable, Equatable {
    associatedtype Key: Hashable & Sendable
    /// The key this change is about; `nil` when it is about every key.
    var changedKey: Key? { get }
    /// The change delivered in place of those a full buffer dropped.
    static var overflow: Self { get }
}

extension CacheChange: ObservedChange {
    package var changedKey: String? { key }
    package static var overflow: CacheChange { CacheChange(key: nil, kind: .overflowed) }
}
