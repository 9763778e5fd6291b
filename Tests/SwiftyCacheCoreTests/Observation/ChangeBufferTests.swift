import SwiftyCacheCore
import Testing

/// A subscriber's buffer: one change per key, the latest, in the order of their last change;
/// a change of every key supersedes the rest; bounded in keys, and in memory however many
/// changes arrive.
@Suite struct ChangeBufferTests {
    static func drain(_ buffer: inout ChangeBuffer<CacheChange>) -> [CacheChange] {
        var changes: [CacheChange] = []
        while let change = buffer.popFirst() { changes.append(change) }
        return changes
    }

    @Test func aKeysLatestChangeWinsAndTakesItsPlaceInTheOrder() {
        var buffer = ChangeBuffer<CacheChange>(keyLimit: 100)
        buffer.append(CacheChange(key: "a", kind: .committed))
        buffer.append(CacheChange(key: "b", kind: .committed))
        buffer.append(CacheChange(key: "a", kind: .removed))
        buffer.append(CacheChange(key: "c", kind: .committed))
        #expect(
            Self.drain(&buffer) == [
                CacheChange(key: "b", kind: .committed), CacheChange(key: "a", kind: .removed),
                CacheChange(key: "c", kind: .committed),
            ])
        #expect(buffer.isEmpty && buffer.pendingKeyCount == 0)
    }

    @Test func aChangeOfEveryKeySupersedesWhatWaits() {
        var buffer = ChangeBuffer<CacheChange>(keyLimit: 100)
        buffer.append(CacheChange(key: "a", kind: .committed))
        buffer.append(CacheChange(key: nil, kind: .cleared))
        buffer.append(CacheChange(key: "b", kind: .committed))
        #expect(
            Self.drain(&buffer) == [CacheChange(key: nil, kind: .cleared), CacheChange(key: "b", kind: .committed)])
    }

    @Test func moreKeysThanTheLimitCollapseIntoOneOverflow() {
        var buffer = ChangeBuffer<CacheChange>(keyLimit: 3)
        for key in ["a", "b", "c", "a"] { buffer.append(CacheChange(key: key, kind: .committed)) }
        #expect(buffer.pendingKeyCount == 3)
        buffer.append(CacheChange(key: "d", kind: .committed))
        buffer.append(CacheChange(key: "e", kind: .removed))
        #expect(
            Self.drain(&buffer) == [CacheChange(key: nil, kind: .overflowed), CacheChange(key: "e", kind: .removed)])
    }

    /// A stalled consumer and a million changes over 1,000 keys: the buffer holds at most two
    /// entries a key, and each key's final state comes out.
    @Test func aMillionChangesStayWithinAFixedBound() {
        var buffer = ChangeBuffer<CacheChange>(keyLimit: 10_000)
        var finalKinds: [String: CacheChange.Kind] = [:]
        var largest = 0
        for step in 0..<1_000_000 {
            let key = "k\(step % 1_000)"
            let kind: CacheChange.Kind = step % 7 == 0 ? .removed : .committed
            buffer.append(CacheChange(key: key, kind: kind))
            finalKinds[key] = kind
            largest = max(largest, buffer.storedCount)
        }
        #expect(largest <= 2 * 1_000 + 1)
        let delivered = Self.drain(&buffer)
        #expect(delivered.count == 1_000)
        #expect(
            Dictionary(uniqueKeysWithValues: delivered.compactMap { c in c.key.map { ($0, c.kind) } }) == finalKinds)
        // A million distinct keys: the limit holds them, then one overflow stands for the rest.
        for step in 0..<1_000_000 { buffer.append(CacheChange(key: "d\(step)", kind: .committed)) }
        #expect(buffer.pendingKeyCount <= 10_000 && buffer.storedCount <= 2 * 10_000 + 1)
    }
}
