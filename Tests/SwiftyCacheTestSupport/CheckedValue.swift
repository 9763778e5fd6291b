public import Foundation

/// A value that carries its own key, slot, sequence number and checksum, so that a torn value,
/// or one that belongs to another key or slot, is detected when read back.
///
/// Layout: `key|slot|seq|filler|checksum`, the checksum an FNV-1a hash (hexadecimal) of all
/// that precedes it.
public enum CheckedValue {
    public struct Parsed: Equatable, Sendable {
        public var key: String
        public var slot: Int
        public var sequence: Int
    }

    public static func make(key: String, slot: Int, sequence: Int, fillerLength: Int) -> Data {
        let body =
            "\(key)|\(slot)|\(sequence)|"
            + String(repeating: Character(UnicodeScalar(UInt8(97 + sequence % 26))), count: fillerLength) + "|"
        return Data((body + String(fnv1a(Data(body.utf8)), radix: 16)).utf8)
    }

    /// The value's fields, or `nil` if it is torn or corrupt.
    public static func parse(_ data: Data) -> Parsed? {
        guard let bar = data.lastIndex(of: UInt8(ascii: "|")) else { return nil }
        let body = data[data.startIndex...bar]
        let checksum = String(decoding: data[(bar + 1)...], as: UTF8.self)
        guard String(fnv1a(Data(body)), radix: 16) == checksum else { return nil }
        let fields = String(decoding: body, as: UTF8.self).split(separator: "|", omittingEmptySubsequences: false)
        guard fields.count >= 4, let slot = Int(fields[1]), let sequence = Int(fields[2]) else { return nil }
        return Parsed(key: String(fields[0]), slot: slot, sequence: sequence)
    }

    static func fnv1a(_ data: Data) -> UInt64 {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in data {
            hash ^= UInt64(byte)
            hash &*= 0x0000_0100_0000_01b3
        }
        return hash
    }
}

extension CheckedValue {
    /// The two slots of one commit of `key`: both carry `sequence`.
    public static func pair(key: String, sequence: Int) -> [Data] {
        (0..<2).map { make(key: key, slot: $0, sequence: sequence, fillerLength: sequence % 90) }
    }

    /// What each slot of `values` holds, for a violation's message: its key, slot and sequence
    /// when it reads as a whole value, else its length and first bytes.
    public static func describe(_ values: [Data]) -> String {
        let slots = values.map { value in
            if let parsed = parse(value) { return "\(parsed.key) slot \(parsed.slot) sequence \(parsed.sequence)" }
            let start = String(decoding: value.prefix(24), as: UTF8.self)
            return "\(value.count) bytes, not a whole value: \(start.debugDescription)"
        }
        return "[" + slots.joined(separator: "; ") + "]"
    }

    /// Whether `values` are the two slots of one commit of `key`, intact.
    public static func isConsistentPair(_ values: [Data], key: String) -> Bool {
        guard values.count == 2, let first = parse(values[0]), let second = parse(values[1]) else { return false }
        return first.key == key && second.key == key && first.slot == 0 && second.slot == 1
            && first.sequence == second.sequence
    }
}
