/// A dictionary that remembers the order in which its entries were last used.
///
/// Entries live in slabs threaded on a doubly linked list: keys, values and links in parallel
/// arrays, so that moving an entry touches only plain integers (no reference
/// counting), and the slots of removed entries are recycled. Entries are addressed by a stable
/// index, valid until the entry is removed. A stale index is harmless: reads return `nil`,
/// writes do nothing. The hash table (``HashBuckets``) holds slot numbers and hashes only, so
/// each key is stored once, and a caller that has hashed a key already passes the hash in
/// (``index(of:hash:)``) rather than hashing it again.
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
    @usableFromInline var table = HashBuckets()
    /// The least recently used entry's index, `-1` when empty.
    @usableFromInline package var eldest = -1
    /// The most recently used entry's index, `-1` when empty.
    @usableFromInline package var newest = -1

    @inlinable
    package init() {}

    @inlinable package var count: Int { table.count }
    @inlinable package var isEmpty: Bool { table.count == 0 }

    /// The index of `key`'s entry, or `nil`.
    ///
    /// - Complexity: O(1) expected: one hash of the key, one probe.
    @inlinable
    package func index(of key: Key) -> Int? { index(of: key, hash: key.hashValue) }

    /// The index of `key`'s entry, given the key's `hashValue` (which must be its hash in this
    /// process, or the lookup misses), or `nil`.
    ///
    /// - Complexity: O(1) expected, without hashing the key.
    @inlinable
    package func index(of key: Key, hash: Int) -> Int? {
        table.find(hash: hash) { slot in keys[slot] == key }
    }

    /// Makes room for `capacity` entries, so that filling the dictionary does not rehash.
    @inlinable
    package mutating func reserveCapacity(_ capacity: Int) {
        table.reserveCapacity(capacity)
        keys.reserveCapacity(capacity)
        values.reserveCapacity(capacity)
        links.reserveCapacity(capacity)
    }

    @inlinable
    package func key(at index: Int) -> Key? { keys[index] }

    @inlinable
    package func value(at index: Int) -> Value? { values[index] }

    /// What `body` reads of the value at `index`, in place (`nil` for a free slot): a field or
    /// two of a large value without copying it, and so without retaining what it holds.
    @inlinable
    package func withValue<R>(at index: Int, _ body: (Value) -> R) -> R? {
        guard values.indices.contains(index) else { return nil }
        // Through the buffer's addressor: `Array`'s getter would hand over a copy.
        return values.withUnsafeBufferPointer { $0[index].map(body) }
    }

    /// The `hashValue` of the key at `index`, as it was handed in when the entry was inserted
    /// (meaningless for a free slot), so that a caller can find the entry again without hashing.
    @inlinable
    package func hash(at index: Int) -> Int { table.slotHashes[index] }

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
        insert(value, forKey: key, hash: key.hashValue)
    }

    /// Inserts an entry for a key that is not present, given its `hashValue`.
    @inlinable
    @discardableResult
    package mutating func insert(_ value: Value, forKey key: Key, hash: Int) -> Int {
        let index = place(value, forKey: key)
        table.insert(slot: index, hash: hash)
        return index
    }

    /// The index of `key`, inserting `makeValue()` as the newest entry if it is absent, with one
    /// hash of the key and one probe of the table.
    @inlinable
    package mutating func indexInsertingIfAbsent(_ key: Key, _ makeValue: () -> Value) -> Int {
        let hash = key.hashValue
        table.makeRoomForOneMore()
        switch table.probe(hash: hash, { slot in keys[slot] == key }) {
        case .found(let slot):
            return slot
        case .vacant(let bucket):
            // `place` leaves the table alone, so the bucket is still the probe's.
            let index = place(makeValue(), forKey: key)
            table.record(slot: index, hash: hash, inBucket: bucket)
            return index
        }
    }

    /// Inserts `value` as the newest entry if `key` is absent and returns its index; returns
    /// `nil`, changing nothing, if `key` is present. One hash, one probe.
    @inlinable
    package mutating func insertIfAbsent(_ value: Value, forKey key: Key) -> Int? {
        var isNew = false
        let index = indexInsertingIfAbsent(key) {
            isNew = true
            return value
        }
        return isNew ? index : nil
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
        guard links[index].isLive, keys[index] != nil else { return nil }
        unlink(index)
        table.remove(slot: index)
        // Moved out, not copied: the slot's value is not retained only to be released.
        let value = values[index].take()
        keys[index] = nil
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
            guard table.slotHashes[cursor] == key.hashValue else {
                return "the hash kept at \(cursor) is not its key's"
            }
            guard index(of: key) == cursor else { return "the hash table does not point at \(cursor)" }
            visited += 1
            previous = cursor
            cursor = links[cursor].next
        }
        guard previous == newest else { return "the LRU walk does not end at the newest entry" }
        guard visited == table.count else {
            return "the LRU list holds \(visited) entries, the hash table \(table.count)"
        }
        if let violation = table.invariantViolation() { return violation }
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
