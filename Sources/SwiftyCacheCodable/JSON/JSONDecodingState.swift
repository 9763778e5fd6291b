#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// A scanned JSON text and what decoding it has learnt: shared by every container and decoder
/// handed out during one `decode`.
///
/// Reference semantics without a lock: one `decode` call creates it and runs on one thread.
/// `tokens` opts out of the runtime's dynamic exclusivity checks: each access is a read or a
/// one-field update (a cursor) on the decoding thread, never held across a call to user code.
final class JSONDecodingState {
    let bytes: [UInt8]
    @exclusivity(unchecked) var tokens: [JSONToken]
    let options: DirectJSONDecoder.Options
    /// Member names to value tokens, for objects searched by hash (large ones, and every one
    /// under a key strategy), built on their first lookup. Keyed by the object's token.
    private var memberIndexes: [Int: [String: Int]] = [:]

    /// Objects with more members than this are searched by hash rather than by walking.
    static let walkLimit = 16

    init(bytes: [UInt8], tokens: [JSONToken], options: DirectJSONDecoder.Options) {
        self.bytes = bytes
        self.tokens = tokens
        self.options = options
    }

    /// A `null` outside the text, for a `superDecoder` whose key is absent.
    func nullToken() -> Int {
        let index = tokens.count
        tokens.append(
            JSONToken(
                kind: .null, flags: 0, start: 0, end: 0, next: UInt32(index + 1), parent: JSONToken.noParent, cursor: 0)
        )
        return index
    }

    // MARK: Coding paths

    /// The coding path of token `index`, rebuilt from the tape: object members by name, array
    /// elements by index. O(depth × siblings); asked for on errors and by custom strategies.
    func codingPath(of index: Int) -> [any CodingKey] {
        var path: [any CodingKey] = []
        var child = index
        while tokens[child].parent != JSONToken.noParent {
            let parent = Int(tokens[child].parent)
            if tokens[parent].kind == .object {
                path.append(JSONKey(stringValue: (try? string(at: child - 1)) ?? ""))
            } else {
                var position = 0
                var sibling = parent + 1
                while sibling < child {
                    position += 1
                    sibling = Int(tokens[sibling].next)
                }
                path.append(JSONKey(index: position))
            }
            child = parent
        }
        return path.reversed()
    }

    // MARK: Members

    /// The value token of member `key` of the object at `object`, or `nil`.
    ///
    /// Of members that share a name, the first is the one read, as Foundation's decoder reads
    /// it (`{"a":"b","a":"c"}` is `["a": "b"]`), whatever order members are asked for in.
    ///
    /// - Complexity: O(1) when members are asked for in the order they were written, or by
    ///   hash in objects of more than ``walkLimit`` members; otherwise O(members). The first
    ///   lookup in an object of at most ``walkLimit`` members also compares its names pairwise,
    ///   once (at most 120 comparisons, most of them ended by the lengths).
    func member(_ key: some CodingKey, in object: Int, convertsKeys: Bool) -> Int? {
        let count = Int(tokens[object].end)
        guard count > 0 else { return nil }
        if count > Self.walkLimit || (convertsKeys && options.convertsKeys) || hasDuplicateNames(object) {
            return memberIndex(of: object, convertsKeys: convertsKeys)[key.stringValue]
        }
        var name = key.stringValue
        return name.withUTF8 { wanted in
            let end = Int(tokens[object].next)
            var keyToken = Int(tokens[object].cursor)
            for _ in 0..<count {
                if keyToken >= end { keyToken = object + 1 }
                let valueToken = keyToken + 1
                let following = Int(tokens[valueToken].next)
                if keyMatches(keyToken, wanted) {
                    tokens[object].cursor = UInt32(following)
                    return valueToken
                }
                keyToken = following
            }
            return nil
        }
    }

    /// Whether two members of `object` share a name, worked out on the first lookup and kept in
    /// the object's flags. The walk from the cursor would find a later duplicate before an
    /// earlier one; such objects are read through ``memberIndex(of:convertsKeys:)``, first wins.
    private func hasDuplicateNames(_ object: Int) -> Bool {
        let flags = tokens[object].flags
        if flags & JSONToken.namesChecked != 0 { return flags & JSONToken.hasDuplicateNames != 0 }
        var duplicated = false
        let end = Int(tokens[object].next)
        var first = object + 1
        outer: while first < end {
            var second = Int(tokens[first + 1].next)
            while second < end {
                if sameName(first, second) {
                    duplicated = true
                    break outer
                }
                second = Int(tokens[second + 1].next)
            }
            first = Int(tokens[first + 1].next)
        }
        tokens[object].flags |= JSONToken.namesChecked | (duplicated ? JSONToken.hasDuplicateNames : 0)
        return duplicated
    }

    /// Whether the keys at tokens `a` and `b` spell the same name.
    private func sameName(_ a: Int, _ b: Int) -> Bool {
        let left = tokens[a]
        let right = tokens[b]
        if (left.flags | right.flags) & JSONToken.hasEscapes != 0 {
            return (try? string(at: a)) == (try? string(at: b))
        }
        let length = Int(left.end) - Int(left.start)
        guard length == Int(right.end) - Int(right.start) else { return false }
        return bytes.withUnsafeBufferPointer { all in
            for offset in 0..<length where all[Int(left.start) + offset] != all[Int(right.start) + offset] {
                return false
            }
            return true
        }
    }

    /// Whether the key at token `index` spells `wanted`.
    private func keyMatches(_ index: Int, _ wanted: UnsafeBufferPointer<UInt8>) -> Bool {
        let token = tokens[index]
        if token.flags & JSONToken.hasEscapes != 0 {
            return (try? string(at: index))?.utf8.elementsEqual(wanted) ?? false
        }
        let start = Int(token.start)
        let length = Int(token.end) - start
        guard length == wanted.count else { return false }
        return bytes.withUnsafeBufferPointer { all in
            for offset in 0..<length where all[start + offset] != wanted[offset] { return false }
            return true
        }
    }

    /// The names of the members of `object` (converted by the key strategy when
    /// `convertsKeys`) with their value tokens; the first of duplicate names wins.
    func members(of object: Int, convertsKeys: Bool) -> [(name: String, value: Int)] {
        var result: [(name: String, value: Int)] = []
        result.reserveCapacity(Int(tokens[object].end))
        var keyToken = object + 1
        let end = Int(tokens[object].next)
        while keyToken < end {
            let raw = (try? string(at: keyToken)) ?? ""
            result.append((convertsKeys ? convertedName(raw, at: keyToken) : raw, keyToken + 1))
            keyToken = Int(tokens[keyToken + 1].next)
        }
        return result
    }

    private func memberIndex(of object: Int, convertsKeys: Bool) -> [String: Int] {
        // Dictionaries' keys (not converted) and coding keys (converted) index apart.
        let slot = convertsKeys ? object : -1 - object
        if let index = memberIndexes[slot] { return index }
        var index: [String: Int] = [:]
        for (name, value) in members(of: object, convertsKeys: convertsKeys && options.convertsKeys)
        where index[name] == nil {
            index[name] = value
        }
        memberIndexes[slot] = index
        return index
    }

    private func convertedName(_ raw: String, at keyToken: Int) -> String {
        switch options.key {
        case .useDefaultKeys: raw
        case .convertFromSnakeCase: JSONKeyConversion.camelCase(fromSnakeCase: raw)
        case .custom(let convert): convert(codingPath(of: keyToken + 1)).stringValue
        @unknown default: raw
        }
    }
}
