/// A dictionary that remembers the order in which its entries were last used.
///
/// Values live in a slab threaded on a doubly linked list, so no reference counting is
/// involved; the slots of removed entries are recycled. Entries are addressed by a stable
/// index, valid until the entry is removed. A stale index is harmless: reads return `nil`
/// and writes do nothing.
///
/// - Complexity: lookup, insert, remove and touch are O(1) amortized.
package struct LRUDictionary<Key: Hashable, Value> {
    fileprivate struct Node {
        var key: Key
        var value: Value
        var previous: Int
        var next: Int
    }

    private var nodes: [Node?] = []
    private var free: [Int] = []
    private var indexByKey: [Key: Int] = [:]
    /// The least recently used entry's index, `-1` when empty.
    package private(set) var eldest = -1
    /// The most recently used entry's index, `-1` when empty.
    package private(set) var newest = -1

    package init() {}

    package var count: Int { indexByKey.count }
    package var isEmpty: Bool { indexByKey.isEmpty }

    package func index(of key: Key) -> Int? { indexByKey[key] }

    package func key(at index: Int) -> Key? { nodes[index]?.key }

    package func value(at index: Int) -> Value? { nodes[index]?.value }

    /// Changes the value at `index` in place.
    @discardableResult
    package mutating func update<R>(at index: Int, _ body: (inout Value) -> R) -> R? {
        guard nodes[index] != nil else { return nil }
        return body(&nodes[index]!.value)
    }

    /// Inserts an entry for a key that is not present, as the most recently used one.
    @discardableResult
    package mutating func insert(_ value: Value, forKey key: Key) -> Int {
        let index: Int
        if let reused = free.popLast() {
            index = reused
        } else {
            nodes.append(nil)
            index = nodes.count - 1
        }
        nodes[index] = Node(key: key, value: value, previous: newest, next: -1)
        if newest != -1 { nodes[newest]?.next = index } else { eldest = index }
        newest = index
        indexByKey[key] = index
        return index
    }

    /// Removes the entry at `index` and returns its value.
    @discardableResult
    package mutating func remove(at index: Int) -> Value? {
        guard let node = nodes[index] else { return nil }
        unlink(index)
        indexByKey[node.key] = nil
        nodes[index] = nil
        free.append(index)
        return node.value
    }

    /// Makes the entry the most recently used.
    package mutating func touch(_ index: Int) {
        guard newest != index, nodes[index] != nil else { return }
        unlink(index)
        nodes[index]?.previous = newest
        if newest != -1 { nodes[newest]?.next = index } else { eldest = index }
        newest = index
    }

    /// The index after `index` towards the newest entry, `-1` at the end.
    package func indexAfter(_ index: Int) -> Int { nodes[index]?.next ?? -1 }

    /// Indices from least to most recently used.
    /// - Complexity: O(n).
    package var indicesInLRUOrder: [Int] {
        var result: [Int] = []
        result.reserveCapacity(count)
        var cursor = eldest
        while cursor != -1 {
            result.append(cursor)
            cursor = indexAfter(cursor)
        }
        return result
    }

    package mutating func removeAll() {
        self = LRUDictionary()
    }

    private mutating func unlink(_ index: Int) {
        guard let node = nodes[index] else { return }
        if node.previous != -1 { nodes[node.previous]?.next = node.next } else { eldest = node.next }
        if node.next != -1 { nodes[node.next]?.previous = node.previous } else { newest = node.previous }
        nodes[index]?.previous = -1
        nodes[index]?.next = -1
    }
}

extension LRUDictionary: Sendable where Key: Sendable, Value: Sendable {}
extension LRUDictionary.Node: Sendable where Key: Sendable, Value: Sendable {}
