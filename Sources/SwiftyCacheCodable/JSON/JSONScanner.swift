#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Reads a JSON text (RFC 8259, UTF-8) once, into a tape of ``JSONToken``s, validating it all:
/// structure, numbers, escapes and UTF-8. It never recurses, so a hostile text nests at most
/// `maxDepth` deep before it is refused, whatever the thread's stack.
struct JSONScanner {
    let bytes: UnsafeBufferPointer<UInt8>
    private let maxDepth: Int
    private var tokens: [JSONToken] = []
    private var open: [UInt32] = []
    var position = 0
    /// The most tokens the text can hold.
    private var limit = 1
    /// Whether the innermost container was just opened: its first member, or its end, is next.
    private var justOpened = false

    /// Scans `bytes` into its tape.
    ///
    /// - Throws: `DecodingError.dataCorrupted`, with the byte offset of the fault, for anything
    ///   that is not one valid JSON text, or nesting deeper than `maxDepth`.
    /// - Complexity: O(n) time, and at most one token per byte.
    static func scan(_ bytes: UnsafeBufferPointer<UInt8>, maxDepth: Int = 512) throws -> [JSONToken] {
        guard bytes.count < Int(UInt32.max) else { throw corrupted("The text is larger than 4 GiB.") }
        var scanner = JSONScanner(bytes: bytes, maxDepth: maxDepth)
        // Every token takes a byte of its own and one more to separate it or close what holds it
        // (the densest text is `[0,0,…]`): the table never needs more than `count / 2 + 1`
        // entries, and grows (doubling) up to that bound, never past it. It starts small, so a
        // small text's table comes from the allocator's per-thread cache.
        scanner.limit = bytes.count / 2 + 1
        scanner.tokens.reserveCapacity(min(scanner.limit, 40))
        try scanner.scanText()
        return scanner.tokens
    }

    private init(bytes: UnsafeBufferPointer<UInt8>, maxDepth: Int) {
        self.bytes = bytes
        self.maxDepth = maxDepth
    }

    static func corrupted(_ message: String) -> DecodingError {
        DecodingError.dataCorrupted(
            .init(codingPath: [], debugDescription: "The given data was not valid JSON. \(message)"))
    }

    func fault(_ message: String) -> DecodingError {
        Self.corrupted("\(message) at byte \(position).")
    }

    private mutating func scanText() throws {
        try scanValue()
        while let container = open.last {
            skipWhitespace()
            guard position < bytes.count else { throw fault("Unexpected end of text") }
            let byte = bytes[position]
            let isObject = tokens[Int(container)].kind == .object
            if byte == (isObject ? UInt8(ascii: "}") : UInt8(ascii: "]")) {
                position += 1
                justOpened = false
                close()
            } else if justOpened {
                justOpened = false
                if isObject { try scanKey() }
                try scanValue()
            } else if byte == UInt8(ascii: ",") {
                position += 1
                if isObject { try scanKey() }
                try scanValue()
            } else {
                throw fault(isObject ? "Expected ',' or '}'" : "Expected ',' or ']'")
            }
        }
        skipWhitespace()
        guard position == bytes.count else { throw fault("Unexpected text after the value") }
    }

    private mutating func close() {
        if let container = open.popLast() { tokens[Int(container)].next = UInt32(tokens.count) }
    }

    /// A member's key and its colon.
    private mutating func scanKey() throws {
        skipWhitespace()
        guard position < bytes.count, bytes[position] == UInt8(ascii: "\"") else { throw fault("Expected a key") }
        if let container = open.last { tokens[Int(container)].end += 1 }
        try scanString()
        skipWhitespace()
        guard position < bytes.count, bytes[position] == UInt8(ascii: ":") else { throw fault("Expected ':'") }
        position += 1
    }

    /// One value; a container is opened (and closed at once when empty).
    private mutating func scanValue() throws {
        skipWhitespace()
        guard position < bytes.count else { throw fault("Unexpected end of text") }
        if let container = open.last, tokens[Int(container)].kind == .array { tokens[Int(container)].end += 1 }
        switch bytes[position] {
        case UInt8(ascii: "{"): try openContainer(.object)
        case UInt8(ascii: "["): try openContainer(.array)
        case UInt8(ascii: "\""): try scanString()
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): try scanNumber()
        case UInt8(ascii: "t"): try scanLiteral("true", .trueLiteral)
        case UInt8(ascii: "f"): try scanLiteral("false", .falseLiteral)
        case UInt8(ascii: "n"): try scanLiteral("null", .null)
        default: throw fault("Unexpected character")
        }
    }

    /// Opens a container; the loop in `scanText` reads its members.
    private mutating func openContainer(_ kind: JSONToken.Kind) throws {
        guard open.count < maxDepth else { throw fault("Nesting deeper than \(maxDepth) levels") }
        let index = UInt32(tokens.count)
        append(kind, flags: 0, start: position, end: 0)
        tokens[Int(index)].cursor = index + 1
        position += 1
        open.append(index)
        justOpened = true
    }

    mutating func append(_ kind: JSONToken.Kind, flags: UInt8, start: Int, end: Int) {
        let index = UInt32(tokens.count)
        if tokens.count == tokens.capacity { tokens.reserveCapacity(min(2 * tokens.count, limit)) }
        tokens.append(
            JSONToken(
                kind: kind, flags: flags, start: UInt32(start), end: UInt32(end), next: index + 1,
                parent: open.last ?? JSONToken.noParent, cursor: 0))
    }

    private mutating func skipWhitespace() {
        while position < bytes.count {
            switch bytes[position] {
            case 0x20, 0x0A, 0x0D, 0x09: position += 1
            default: return
            }
        }
    }

    private mutating func scanLiteral(_ word: StaticString, _ kind: JSONToken.Kind) throws {
        let length = word.utf8CodeUnitCount
        guard bytes.count - position >= length,
            UnsafeBufferPointer(rebasing: bytes[position..<(position + length)]).elementsEqual(
                UnsafeBufferPointer(start: word.utf8Start, count: length))
        else { throw fault("Invalid literal") }
        append(kind, flags: 0, start: position, end: position + length)
        position += length
    }
}
