/// The committed length of each of an entry's value slots (and, for a packed record read back,
/// where each slot starts in it: the same few integers per slot).
///
/// One or two slots (most caches) are held inline, beyond that an array: an index of 100,000
/// entries then allocates nothing per entry for its lengths, and copying an entry (a read's
/// plan) retains nothing for them. It reads as a collection of `Int`, as `[Int]` did.
///
/// - Complexity: Subscript, `count` and copies are O(1) for up to two slots. 25 bytes.
package struct SlotLengths: RandomAccessCollection, MutableCollection, Hashable, Sendable, ExpressibleByArrayLiteral {
    /// The first two lengths when there are no more than two.
    private var first = 0
    private var second = 0
    /// Every length when there are more than two, `nil` otherwise.
    private var spilled: [Int]?
    /// The count when the lengths are inline (0, 1 or 2).
    private var inlineCount: UInt8 = 0

    package var count: Int { spilled?.count ?? Int(inlineCount) }

    /// `count` slots of length `length`.
    package init(repeating length: Int, count: Int) {
        if count > 2 {
            spilled = Array(repeating: length, count: count)
        } else {
            inlineCount = UInt8(Swift.max(0, count))
            first = count > 0 ? length : 0
            second = count > 1 ? length : 0
        }
    }

    package init<Lengths: Collection<Int>>(_ lengths: Lengths) {
        if lengths.count > 2 {
            spilled = Array(lengths)
        } else {
            inlineCount = UInt8(lengths.count)
            var iterator = lengths.makeIterator()
            first = iterator.next() ?? 0
            second = iterator.next() ?? 0
        }
    }

    /// `count` lengths, each taken from `next` in turn (`nil` from it, `nil` here): held inline
    /// for one or two slots, so that a reader of millions of entries allocates nothing per entry.
    static func reading(_ count: Int, _ next: () -> Int?) -> SlotLengths? {
        guard count > 2 else {
            var inline = (0, 0)
            if count > 0 {
                guard let length = next() else { return nil }
                inline.0 = length
            }
            if count > 1 {
                guard let length = next() else { return nil }
                inline.1 = length
            }
            return SlotLengths(inline: inline.0, inline.1, count: count)
        }
        var spilled: [Int] = []
        spilled.reserveCapacity(count)
        for _ in 0..<count {
            guard let length = next() else { return nil }
            spilled.append(length)
        }
        return SlotLengths(spilled)
    }

    /// One or two lengths (`count` ≤ 2), held inline.
    package init(inline first: Int, _ second: Int, count: Int) {
        assert(count <= 2, "SlotLengths: \(count) lengths are not inline")
        self.first = first
        self.second = second
        self.inlineCount = UInt8(Swift.max(0, Swift.min(count, 2)))
    }

    package init(arrayLiteral lengths: Int...) {
        self.init(lengths)
    }

    package var startIndex: Int { 0 }
    package var endIndex: Int { count }

    package subscript(position: Int) -> Int {
        get {
            assert(indices.contains(position), "SlotLengths: slot \(position) of \(count)")
            if let spilled { return spilled[position] }
            return position == 0 ? first : second
        }
        set {
            assert(indices.contains(position), "SlotLengths: slot \(position) of \(count)")
            if spilled != nil {
                spilled?[position] = newValue
            } else if position == 0 {
                first = newValue
            } else {
                second = newValue
            }
        }
    }

    /// The sum of the lengths, `nil` if it overflows `Int`.
    package var total: Int? {
        var total = 0
        for length in self {
            let (sum, overflow) = total.addingReportingOverflow(length)
            guard !overflow else { return nil }
            total = sum
        }
        return total
    }

    package static func == (lhs: SlotLengths, rhs: SlotLengths) -> Bool {
        lhs.elementsEqual(rhs)
    }

    package func hash(into hasher: inout Hasher) {
        hasher.combine(count)
        for length in self { hasher.combine(length) }
    }
}

extension SlotLengths: CustomStringConvertible {
    package var description: String { Array(self).description }
}
