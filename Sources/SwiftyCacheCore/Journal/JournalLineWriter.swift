/// One journal line composed in place: its pieces (a verb, the key, numbers, the check) written
/// through a pointer into room sized for the line (``Journal/lineBound(of:keyCount:)``), then
/// appended to the journal's buffer with one copy.
///
/// A line is ten pieces or more; appended to an `[UInt8]` one by one, each paid the array's
/// uniqueness and capacity checks and a generic copy (about ninety instructions a piece, a
/// thousand a line, for every commit and every member of a batch).
///
/// A piece that would not fit is not written and marks the line ``overflowed`` (room from
/// ``Journal/lineBound(of:keyCount:)`` always fits; the mark keeps a wrong bound from writing
/// past the room).
struct JournalLineWriter {
    private let room: UnsafeMutableBufferPointer<UInt8>
    /// The bytes written so far.
    private(set) var count = 0
    /// Whether a piece did not fit.
    private(set) var overflowed = false

    init(_ room: UnsafeMutableBufferPointer<UInt8>) {
        self.room = room
    }

    /// The line so far.
    var written: UnsafeBufferPointer<UInt8> {
        UnsafeBufferPointer(rebasing: room[..<count])
    }

    /// Makes room for `length` more bytes; `false` (and ``overflowed``) when there is none.
    private mutating func claim(_ length: Int) -> Bool {
        guard room.count - count >= length else {
            overflowed = true
            return false
        }
        return true
    }

    mutating func write(_ byte: UInt8) {
        guard claim(1) else { return }
        room[count] = byte
        count += 1
    }

    mutating func write(_ bytes: UnsafeBufferPointer<UInt8>) {
        guard claim(bytes.count), let source = bytes.baseAddress, let base = room.baseAddress else { return }
        (base + count).initialize(from: source, count: bytes.count)
        count += bytes.count
    }

    mutating func write(_ text: StaticString) {
        write(UnsafeBufferPointer(start: text.utf8Start, count: text.utf8CodeUnitCount))
    }

    /// `value` in decimal (`0` for anything below 1), at most 19 digits, two at a time.
    mutating func writeDecimal(_ value: Int) {
        guard value > 0 else { return write(UInt8(ascii: "0")) }
        var digits = 1
        var power = 10
        while digits < 19, value >= power {
            digits += 1
            power = power &* 10
        }
        guard claim(digits) else { return }
        var rest = value
        var index = count + digits
        while rest >= 100 {
            let (quotient, pair) = rest.quotientAndRemainder(dividingBy: 100)
            index -= 2
            writePair(pair, at: index)
            rest = quotient
        }
        if rest >= 10 {
            writePair(rest, at: index - 2)
        } else {
            room[index - 1] = UInt8(ascii: "0") &+ UInt8(truncatingIfNeeded: rest)
        }
        count += digits
    }

    /// The two digits of `pair` (below 100) at `index`.
    private func writePair(_ pair: Int, at index: Int) {
        room[index] = UInt8(ascii: "0") &+ UInt8(truncatingIfNeeded: pair / 10)
        room[index + 1] = UInt8(ascii: "0") &+ UInt8(truncatingIfNeeded: pair % 10)
    }

    /// The eight lower-case hexadecimal digits of `value`.
    mutating func writeHex(_ value: UInt32) {
        withUnsafeBytes(of: JournalLineCheck.hexText(value).littleEndian) {
            write($0.assumingMemoryBound(to: UInt8.self))
        }
    }
}
