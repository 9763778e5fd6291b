/// One value of a scanned JSON text, in a flat array (the tape) in document order: a container
/// is followed by its members (an object's as key, value, key, value), and knows where they end.
///
/// 24 bytes a token, one token per value or key, at most `n / 2 + 1` of them for an `n`-byte
/// text (`[0,0,…]`, two bytes a token): the tape, which grows up to that bound and never past
/// it, takes at most `12 n + 24` bytes (and the allocator's rounding), however the text nests.
struct JSONToken {
    enum Kind: UInt8 {
        case object, array, string, number, trueLiteral, falseLiteral, null
    }

    var kind: Kind
    /// For a string: ``hasEscapes``. For a number: ``isPlainInteger``. For an object:
    /// ``namesChecked`` and ``hasDuplicateNames``.
    var flags: UInt8
    /// A string's first byte after the quote; a number's first byte; a container's bracket.
    var start: UInt32
    /// A string's closing quote; the byte after a number; a container's member count.
    var end: UInt32
    /// The index of the token after this value and everything in it.
    var next: UInt32
    /// The index of the container this value is in; `noParent` at the top.
    var parent: UInt32
    /// For an object: the key token where the next lookup starts (members are usually asked for
    /// in the order they were written).
    var cursor: UInt32

    static let hasEscapes: UInt8 = 1
    static let isPlainInteger: UInt8 = 1
    /// For an object: whether ``hasDuplicateNames`` has been worked out.
    static let namesChecked: UInt8 = 2
    /// For an object: two of its members share a name (the first one is read, as Foundation does).
    static let hasDuplicateNames: UInt8 = 4
    static let noParent = UInt32.max

    var isContainer: Bool { kind == .object || kind == .array }
}
