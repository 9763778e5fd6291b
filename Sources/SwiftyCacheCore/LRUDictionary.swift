/// A dictionary that remembers the order in which its entries were last used.
///
/// Entries live in slabs threaded on a doubly linked list: keys, values and links in parallel
/// arrays, so that moving an entry touches only plain integers (no reference counting), and
/// the slots of removed entries are recycled. Entries are addressed by a stable index, valid
/// until the entry is removed. A stale index is harmless: reads return `nil`, writes do nothing.
///
/// - Complexity: lookup, insert, remove and touch are O(1) amortized.
@usableFromInline
package struct LRUDictionary<Key: Hashable, Value> {
    @usableFromInline
    struct Link {
        @usableFromInline var previous: Int
        @usableFromInline var next: Int
        /// Whether the slot holds an entry.
        @usableFromInline var isLive: Bool

        @inlinable
        init(previous: Int, next: Int, isLive: Bool) {
            self.previous = previous
            self.next = next
            self.isLive = isLive
        }
    }

    @usableFromInline var keys: [Key?] = []
    @usableFromInline var values: [Value?] = []
    @usableFromInline var links: [Link] = []
    @usableFromInline var free: [Int] = []
    @usableFromInline var indexByKey: [Key: Int] = [:]
    /// The least recently used entry's index, `-1` when empty.
    @usableFromInline package var eldest = -1
    /// The most recently used entry's index, `-1` when empty.
    @usableFromInline package var newest = -1

    @inlinable
    package init() {}

    @inlinable package var count: Int { indexByKey.count }
    @inlinable package var isEmpty: Bool { indexByKey.isEmpty }

    @inlinable
    package func index(of key: Key) -> Int? { indexByKey[key] }

    /// Makes room for `capacity` entries, so that filling the dictionary does not rehash.
    @inlinable
    package mutating func reserveCapacity(_ capacity: Int) {
        indexByKey.reserveCapacity(capacity)
        keys.reserveCapacity(capacity)
        values.reserveCapacity(capacity)
        links.reserveCapacity(capacity)
    }

    @inlinable
    package func key(at index: Int) -> Key? { keys[index] }

    @inlinable
    package func value(at index: Int) -> Value? { values[index] }

    /// Changes the value at `index` in place.
    @inlinable
    @discardableResult
    package mutating func update<R>(at index: Int, _ body: (inout Value) -> R) -> R? {
        guard links[index].isLive, values[index] != nil else { return nil }
        // In place, no copy: the unwrap cannot fail, it was checked on the line above.
        return body(&values[index]!)
    }

    /// Inserts an entry for a key that is not present, as the most recently used one.
    @inlinable
    @discardableResult
    package mutating func insert(_ value: Value, forKey key: Key) -> Int {
        let index = place(value, forKey: key)
        indexByKey[key] = index
        return index
    }

    /// The index of `key`, inserting `makeValue()` as the newest entry if it is absent, with a
    /// single probe of the hash table.
    @inlinable
    package mutating func indexInsertingIfAbsent(_ key: Key, _ makeValue: () -> Value) -> Int {
        let candidate = free.last ?? links.count
        var found = -1
        var isNew = false
        func claim(_ slot: inout Int) {
            if slot == -1 {
                slot = candidate
                isNew = true
            }
            found = slot
        }
        claim(&indexByKey[key, default: -1])
        guard isNew else { return found }
        return place(makeValue(), forKey: key)
    }

    /// Stores an entry in a free slot (the last freed one, or a new one at the end) and links it
    /// as the newest, without touching the hash table.
    @inlinable
    mutating func place(_ value: Value, forKey key: Key) -> Int {
        let index: Int
        let link = Link(previous: newest, next: -1, isLive: true)
        if let reused = free.popLast() {
            index = reused
            keys[index] = key
            values[index] = value
            links[index] = link
        } else {
            index = links.count
            keys.append(key)
            values.append(value)
            links.append(link)
        }
        if newest != -1 { links[newest].next = index } else { eldest = index }
        newest = index
        return index
    }

    /// Removes the entry at `index` and returns its value.
    @inlinable
    @discardableResult
    package mutating func remove(at index: Int) -> Value? {
        guard links[index].isLive, let key = keys[index] else { return nil }
        unlink(index)
        indexByKey[key] = nil
        let value = values[index]
        keys[index] = nil
        values[index] = nil
        links[index].isLive = false
        free.append(index)
        return value
    }

    /// Makes the entry the most recently used.
    @inlinable
    package mutating func touch(_ index: Int) {
        guard newest != index, links[index].isLive else { return }
        unlink(index)
        links[index].previous = newest
        if newest != -1 { links[newest].next = index } else { eldest = index }
        newest = index
    }

    /// The index after `index` towards the newest entry, `-1` at the end.
    @inlinable
    package func indexAfter(_ index: Int) -> Int { links[index].isLive ? links[index].next : -1 }

    /// Indices from least to most recently used.
    /// - Complexity: O(n).
    @inlinable
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

    /// Indices of live entries in storage order.
    /// - Complexity: O(capacity), reading memory sequentially.
    @inlinable
    package var indicesInStorageOrder: [Int] {
        var result: [Int] = []
        result.reserveCapacity(count)
        for index in links.indices where links[index].isLive { result.append(index) }
        return result
    }

    /// Checks that the linked list and the hash table agree: walking from the eldest entry
    /// visits every key exactly once, each link's `previous` points back, and the walk ends at
    /// the newest. Returns the first violation, `nil` when there is none.
    ///
    /// - Complexity: O(n).
    package func invariantViolation() -> String? {
        var visited = 0
        var previous = -1
        var cursor = eldest
        while cursor != -1 {
            guard visited < links.count else { return "the LRU list has a cycle" }
            guard links[cursor].isLive, let key = keys[cursor] else { return "the LRU list reaches a free slot" }
            guard links[cursor].previous == previous else { return "a backward link is wrong at \(cursor)" }
            guard indexByKey[key] == cursor else { return "the hash table does not point at \(cursor)" }
            visited += 1
            previous = cursor
            cursor = links[cursor].next
        }
        guard previous == newest else { return "the LRU walk does not end at the newest entry" }
        guard visited == indexByKey.count else {
            return "the LRU list holds \(visited) entries, the hash table \(indexByKey.count)"
        }
        guard visited + free.count == links.count else { return "slots are neither live nor free" }
        return nil
    }

    @inlinable
    package mutating func removeAll() {
        self = LRUDictionary()
    }

    @inlinable
    mutating func unlink(_ index: Int) {
        let link = links[index]
        if link.previous != -1 { links[link.previous].next = link.next } else { eldest = link.next }
        if link.next != -1 { links[link.next].previous = link.previous } else { newest = link.previous }
        links[index].previous = -1
        links[index].next = -1
    }
}

extension LRUDictionary: Sendable where Key: Sendable, Value: Sendable {}
extension LRUDictionary.Link: Sendable {}
